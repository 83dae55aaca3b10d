package wire

// Me is GET /v1/me: the calling key and its project.
type Me struct {
	Project MeProject `json:"project"`
	Key     MeKey     `json:"key"`
}

// MeProject is the project of the calling key.
type MeProject struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Plan Plan   `json:"plan"`
}

// MeKey is the calling key.
type MeKey struct {
	ID    int64    `json:"id"`
	Scope Scope    `json:"scope"`
	Tools []string `json:"tools" doc:"the worker allowlist of tool@version; empty for other scopes"`
}

// KeyCreate is POST /v1/keys.
type KeyCreate struct {
	Name  string   `json:"name,omitempty" maxLength:"200"`
	Scope Scope    `json:"scope"`
	Tools []string `json:"tools,omitempty" pattern:"toolRef" doc:"a worker key's allowlist of tool@version; required for worker keys, refused for others"`
}

// Key is an API key. Secret is set only in the response that created it:
// it is shown once and never stored.
type Key struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Scope     Scope    `json:"scope"`
	Prefix    string   `json:"prefix" doc:"the first characters of the secret, to recognise it"`
	Tools     []string `json:"tools"`
	CreatedAt string   `json:"createdAt" format:"date-time"`
	RevokedAt string   `json:"revokedAt,omitempty" format:"date-time"`
	Secret    string   `json:"key,omitempty" doc:"the secret, in the create response only"`
}

// KeyList is GET /v1/keys.
type KeyList struct {
	Keys []Key `json:"keys"`
}
