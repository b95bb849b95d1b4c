"""Publishing mined tasks: what leaves this machine, where it goes (a Hub dataset, a
Harbor registry), and what comes back. One module per job; this file imports nothing,
so each publisher adds its own modules without touching the others."""
