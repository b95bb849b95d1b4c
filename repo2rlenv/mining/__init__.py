"""Mining sessions: sources (Hub, files, folders) and the session pipeline."""
