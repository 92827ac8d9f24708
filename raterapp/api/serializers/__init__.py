"""Request and response shapes of the JSON API, one module per resource (names are unique across
them: they are the OpenAPI components)."""
