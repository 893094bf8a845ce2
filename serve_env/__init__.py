"""Our games served to outside trainers and agents over OpenEnv's protocol (`arena serve-env`)."""
