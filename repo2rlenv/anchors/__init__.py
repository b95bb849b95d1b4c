"""Sessions inside existing repositories: find the repository and commit, check it out."""
