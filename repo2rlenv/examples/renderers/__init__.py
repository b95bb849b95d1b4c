"""One renderer per harness: a harness-neutral example story written in the on-disk
format that harness really writes (`repo2rlenv.examples.session_formats` picks which
story goes in which format). A module per harness, so a format's quirks stay with it."""
