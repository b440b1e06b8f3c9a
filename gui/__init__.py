"""Every widget and all Qt code of Dataflow Explorer."""
