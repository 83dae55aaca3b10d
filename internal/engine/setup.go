package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// Principal is an authenticated API key.
type Principal struct {
	ProjectID int64
	KeyID     int64
	Scope     wire.Scope
	Tools     []string // worker allowlist
	KeyName   string   // the key's name, "" when it has none
	KeyPrefix string   // the first characters of the key's secret
}

// Actor names the key in the audit log and in pauses: its name, or its
// prefix when it has none.
func (p *Principal) Actor() string {
	if p.KeyName != "" {
		return p.KeyName
	}
	return p.KeyPrefix
}

// Can reports whether the key's scope allows an action meant for scope.
// Owner keys may do everything.
func (p *Principal) Can(scope wire.Scope) bool {
	return p.Scope == wire.ScopeOwner || p.Scope == scope
}

// Require returns a 403 error unless the key may act as one of scopes.
func (p *Principal) Require(scopes ...wire.Scope) error {
	for _, s := range scopes {
		if p.Can(s) {
			return nil
		}
	}
	return forbidden("%s key cannot do this; it needs %s key", withArticle(string(p.Scope)), withArticle(joinOr(scopes)))
}

// HashKey is how secrets are stored: keys are 32 random bytes, so a plain
// SHA-256 is enough (no password stretching needed for high-entropy secrets).
func HashKey(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// NewSecret makes an API key secret: "rk_" and 32 random bytes in hex.
func NewSecret() string { return "rk_" + token() + token() }

// Bootstrap creates the first project (plan PRO) and an owner key when the
// database has no project yet. secret may be given (for automation) or empty
// to generate one. It returns the secret when it created the key.
func (e *Engine) Bootstrap(ctx context.Context, secret string) (created bool, key string, err error) {
	if secret != "" && len(secret) < MinBootstrapKeyLen {
		return false, "", invalidField("bootstrapKey", "a key of "+strconv.Itoa(len(secret))+" characters", "must be at least "+strconv.Itoa(MinBootstrapKeyLen)+" characters; a generated key has 46")
	}
	chosen := secret != ""
	err = e.st.Tx(ctx, func(q store.Queries) error {
		n, err := q.ProjectCount(ctx)
		if err != nil || n > 0 {
			return err
		}
		now := e.nowMs()
		p := &store.Project{Name: "default", Plan: wire.PlanPro, CreatedAt: now}
		if err := q.ProjectCreate(ctx, p); err != nil {
			return err
		}
		if secret == "" {
			secret = NewSecret()
		}
		pre := prefix(secret)
		if chosen {
			// A chosen key may be words a person picked: keep none of it.
			pre = "(chosen)"
		}
		k := &store.APIKey{ProjectID: p.ID, Name: "bootstrap owner", Scope: wire.ScopeOwner, Hash: HashKey(secret), Prefix: pre, CreatedAt: now}
		if err := q.KeyCreate(ctx, k); err != nil {
			return err
		}
		created, key = true, secret
		return nil
	})
	return created, key, err
}

// CreateProject makes another tenant with an owner key (for hosts that serve
// many projects, and for tests of isolation).
func (e *Engine) CreateProject(ctx context.Context, name string, plan wire.Plan) (*store.Project, string, error) {
	if !slices.Contains(wire.Plans(), plan) {
		return nil, "", invalidField("plan", strconv.Quote(string(plan)), "must be one of "+wire.Join(wire.Plans(), ", "))
	}
	secret := NewSecret()
	var p *store.Project
	err := e.st.Tx(ctx, func(q store.Queries) error {
		now := e.nowMs()
		p = &store.Project{Name: name, Plan: plan, CreatedAt: now}
		if err := q.ProjectCreate(ctx, p); err != nil {
			return err
		}
		return q.KeyCreate(ctx, &store.APIKey{ProjectID: p.ID, Name: "owner", Scope: wire.ScopeOwner, Hash: HashKey(secret), Prefix: prefix(secret), CreatedAt: now})
	})
	return p, secret, err
}

// SetPlan changes a project's plan.
func (e *Engine) SetPlan(ctx context.Context, projectID int64, plan wire.Plan) error {
	if !slices.Contains(wire.Plans(), plan) {
		return invalidField("plan", strconv.Quote(string(plan)), "must be one of "+wire.Join(wire.Plans(), ", "))
	}
	return e.st.Tx(ctx, func(q store.Queries) error { return q.ProjectSetPlan(ctx, projectID, plan) })
}

// Project reads the principal's project.
func (e *Engine) Project(ctx context.Context, p *Principal) (*store.Project, error) {
	var out *store.Project
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.ProjectGet(ctx, p.ProjectID)
		return err
	})
	return out, storeErr(err, "project")
}

func prefix(secret string) string {
	if len(secret) > 10 {
		return secret[:10]
	}
	return secret
}

// ErrUnauthenticated is returned for a missing, unknown or revoked key.
var ErrUnauthenticated = &Error{Kind: KindUnauthenticated, Message: "a valid API key is required: send Authorization: Bearer <key>"}

// Authenticate resolves a secret to its principal.
func (e *Engine) Authenticate(ctx context.Context, secret string) (*Principal, error) {
	if secret == "" {
		return nil, ErrUnauthenticated
	}
	var k *store.APIKey
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		k, err = q.KeyByHash(ctx, HashKey(secret))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, storeErr(err, "key")
	}
	if k.RevokedAt != 0 {
		return nil, ErrUnauthenticated
	}
	return &Principal{ProjectID: k.ProjectID, KeyID: k.ID, Scope: k.Scope, Tools: k.Tools, KeyName: k.Name, KeyPrefix: k.Prefix}, nil
}

// KeySpec asks for a new key.
type KeySpec struct {
	Name  string
	Scope wire.Scope
	Tools []string // worker allowlist of tool@version
}

// CreateKey makes a key in the principal's project and returns its secret,
// which is shown once and never stored.
func (e *Engine) CreateKey(ctx context.Context, p *Principal, spec KeySpec) (*store.APIKey, string, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, "", err
	}
	var errs field.Errors
	if !slices.Contains(wire.Scopes(), spec.Scope) {
		errs = append(errs, &field.Error{Field: "scope", Value: strconv.Quote(string(spec.Scope)), Allowed: "must be one of " + wire.Join(wire.Scopes(), ", ")})
	}
	if len(spec.Name) > 200 {
		errs = append(errs, &field.Error{Field: "name", Value: "a name of " + strconv.Itoa(len(spec.Name)) + " characters", Allowed: "must be at most 200 characters"})
	}
	if spec.Scope == wire.ScopeWorker && len(spec.Tools) == 0 {
		errs = append(errs, &field.Error{Field: "tools", Value: "[]", Allowed: `a worker key needs an allowlist of "name@version" tools`})
	}
	if spec.Scope != wire.ScopeWorker && len(spec.Tools) > 0 {
		errs = append(errs, &field.Error{Field: "tools", Value: fmt.Sprint(spec.Tools), Allowed: "only worker keys carry a tool allowlist"})
	}
	for i, t := range spec.Tools {
		if _, _, err := ParseToolRef(t); err != nil {
			errs = append(errs, &field.Error{Field: "tools[" + strconv.Itoa(i) + "]", Value: strconv.Quote(t), Allowed: `must be "name@version"`})
		}
	}
	if len(errs) > 0 {
		return nil, "", invalid(errs)
	}
	return e.mintKey(ctx, p, spec, "key.create", "")
}

// mintKey stores a new key of spec in the principal's project and writes
// the audit entry (action; detail after why) in the same transaction. It
// returns the secret, which is shown once and never stored.
func (e *Engine) mintKey(ctx context.Context, p *Principal, spec KeySpec, action, why string) (*store.APIKey, string, error) {
	secret := NewSecret()
	k := &store.APIKey{ProjectID: p.ProjectID, Name: spec.Name, Scope: spec.Scope, Hash: HashKey(secret), Prefix: prefix(secret), Tools: spec.Tools, CreatedAt: e.nowMs()}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		if _, err := q.ProjectGet(ctx, p.ProjectID); errors.Is(err, store.ErrNotFound) {
			return notFound("project %d not found", p.ProjectID)
		} else if err != nil {
			return err
		}
		if err := q.KeyCreate(ctx, k); err != nil {
			return err
		}
		return e.audit(ctx, q, p, k.CreatedAt, action, "key:"+strconv.FormatInt(k.ID, 10),
			why+fmt.Sprintf("created %s key %s (prefix %s)", k.Scope, strconv.Quote(k.Name), k.Prefix))
	})
	if err != nil {
		return nil, "", storeErr(err, "key")
	}
	return k, secret, nil
}

// RecoveryActor is the actor of the audit entry RecoverOwnerKey writes:
// no key acted, someone with the database file did.
const RecoveryActor = "offline recovery"

// RecoverOwnerKey makes a new owner key for a project whose owner keys are
// lost. It needs no key, only the store: `ratchet keys recover` runs it on
// the database directly, which is as much access as the data itself. The
// audit entry (action key.recover) names who ran it, as by says (the
// machine's user and host), since no key did.
func (e *Engine) RecoverOwnerKey(ctx context.Context, projectID int64, name, by string) (*store.APIKey, string, error) {
	if len(name) > 200 {
		return nil, "", invalidField("name", "a name of "+strconv.Itoa(len(name))+" characters", "must be at most 200 characters")
	}
	p := &Principal{ProjectID: projectID, Scope: wire.ScopeOwner, KeyName: RecoveryActor}
	return e.mintKey(ctx, p, KeySpec{Name: name, Scope: wire.ScopeOwner}, "key.recover", "recovered access on the database, without a key, by "+by+": ")
}

// ListKeys lists the project's keys (never their secrets).
func (e *Engine) ListKeys(ctx context.Context, p *Principal) ([]store.APIKey, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var out []store.APIKey
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.KeyList(ctx, p.ProjectID)
		return err
	})
	return out, storeErr(err, "keys")
}

// RevokeKey revokes a key of the project.
func (e *Engine) RevokeKey(ctx context.Context, p *Principal, id int64) error {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return err
	}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		// The last owner key of a project cannot be revoked: nobody could
		// ever make keys for it again.
		keys, err := q.KeyList(ctx, p.ProjectID)
		if err != nil {
			return err
		}
		owners, isOwner := 0, false
		for _, k := range keys {
			if k.Scope == wire.ScopeOwner && k.RevokedAt == 0 {
				owners++
				isOwner = isOwner || k.ID == id
			}
		}
		if isOwner && owners == 1 {
			return conflict("key %d is the project's last owner key; create another owner key before revoking it", id)
		}
		now := e.nowMs()
		if err := q.KeyRevoke(ctx, &store.KeyRevokeParams{ProjectID: p.ProjectID, ID: id, Now: now}); err != nil {
			return err
		}
		detail := "revoked key " + strconv.FormatInt(id, 10)
		for _, k := range keys {
			if k.ID == id {
				detail += fmt.Sprintf(" (%s, %s, prefix %s)", k.Scope, strconv.Quote(k.Name), k.Prefix)
			}
		}
		return e.audit(ctx, q, p, now, "key.revoke", "key:"+strconv.FormatInt(id, 10), detail)
	})
	return storeErr(err, "key "+strconv.FormatInt(id, 10))
}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)
)

// What a name (of an endpoint or a tool) and a tool version may be.
const (
	NameAllowed    = "must be 1–64 characters of a–z, 0–9, '.', '_' or '-', starting with a letter or digit"
	VersionAllowed = "must be 1–32 characters of A–Z, a–z, 0–9, '.', '_' or '-', starting with a letter or digit"
)

// ValidName reports whether s may name an endpoint or a tool.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// ValidVersion reports whether s may be a tool version.
func ValidVersion(s string) bool { return versionRE.MatchString(s) }

// ParseToolRef splits "name@version".
func ParseToolRef(ref string) (name, version string, err error) {
	name, version, ok := strings.Cut(ref, "@")
	if !ok || !nameRE.MatchString(name) || !versionRE.MatchString(version) {
		return "", "", invalidField("tool", strconv.Quote(ref), `must be "name@version", e.g. "charge-card@1"`)
	}
	return name, version, nil
}

// EndpointPolicy is everything about an endpoint an owner can set: the
// retry policy and the settings, embedded as the wire defines them (the
// store's row embeds the same struct, so saving and reading them are
// assignments of the whole, not copies member by member).
type EndpointPolicy struct {
	Policy backoff.Policy
	wire.EndpointSettings
}

// Endpoint defaults and limits.
const (
	DefaultTimeoutMs        = 30_000
	DefaultMaxConcurrent    = 10
	DefaultCircuitThreshold = 5
	DefaultCircuitOpenMs    = 5_000
)

// DefaultEndpointPolicy is the policy of an endpoint created without one:
// STANDARD retries and the defaults above.
func DefaultEndpointPolicy() EndpointPolicy {
	return EndpointPolicy{Policy: backoff.PresetPolicy(backoff.Standard), EndpointSettings: wire.EndpointSettings{DefaultTimeoutMs: DefaultTimeoutMs, MaxConcurrent: DefaultMaxConcurrent, CircuitFailureThreshold: DefaultCircuitThreshold, CircuitOpenMs: DefaultCircuitOpenMs,
		BudgetTimeZone: "UTC"}}
}

// checkPlan refuses CUSTOM policies on a plan that does not allow them
// (wire.Plan.AllowsCustom: FREE).
func checkPlan(ctx context.Context, q store.Queries, projectID int64, p backoff.Policy, name string) error {
	if p.Preset != backoff.Custom {
		return nil
	}
	proj, err := q.ProjectGet(ctx, projectID)
	if err != nil {
		return err
	}
	if !proj.Plan.AllowsCustom() {
		return &Error{Kind: KindForbidden, Message: "plan " + string(proj.Plan) + " cannot save a CUSTOM retry policy",
			Fields: field.Errors{{Field: name, Value: `"CUSTOM"`, Allowed: "CUSTOM policies need the " + wire.JoinOr(wire.Where(wire.Plans(), wire.Plan.AllowsCustom)) + " plan; use STANDARD, AGGRESSIVE or RELAXED"}}}
	}
	return nil
}

// CreateEndpoint creates an endpoint.
func (e *Engine) CreateEndpoint(ctx context.Context, p *Principal, name string, pol EndpointPolicy) (*store.Endpoint, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	if !nameRE.MatchString(name) {
		return nil, invalidField("name", strconv.Quote(name), NameAllowed)
	}
	policy, _ := json.Marshal(pol.Policy)
	now := e.nowMs()
	ep := &store.Endpoint{ProjectID: p.ProjectID, Name: name, Policy: policy, EndpointSettings: pol.EndpointSettings,
		Version: 1, CreatedAt: now, UpdatedAt: now, CircuitState: wire.CircuitClosed}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		if err := checkPlan(ctx, q, p.ProjectID, pol.Policy, "preset"); err != nil {
			return err
		}
		if err := q.EndpointCreate(ctx, ep); err != nil {
			return err
		}
		return q.ProjectNoteWrite(ctx, p.ProjectID) // the overview lists it at once
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, conflict("endpoint %q already exists", name)
	}
	return ep, storeErr(err, "endpoint")
}

// Endpoint reads an endpoint by name.
func (e *Engine) Endpoint(ctx context.Context, p *Principal, name string) (*store.Endpoint, error) {
	var ep *store.Endpoint
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		ep, err = q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		return err
	})
	return ep, storeErr(err, "endpoint "+strconv.Quote(name))
}

// Endpoints lists the project's endpoints.
func (e *Engine) Endpoints(ctx context.Context, p *Principal) ([]store.Endpoint, error) {
	var out []store.Endpoint
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.EndpointList(ctx, p.ProjectID)
		return err
	})
	return out, storeErr(err, "endpoints")
}

// UpdateEndpointPolicy replaces the endpoint policy if expectedVersion is
// current. On a stale version it returns a conflict carrying the current
// endpoint and changes nothing. Queued jobs keep their snapshots.
func (e *Engine) UpdateEndpointPolicy(ctx context.Context, p *Principal, name string, expectedVersion int64, pol EndpointPolicy) (*store.Endpoint, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var ep *store.Endpoint
	err := e.st.Tx(ctx, func(q store.Queries) error {
		cur, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: name})
		if err != nil {
			return err
		}
		if cur.Version != expectedVersion {
			return &Error{Kind: KindConflict, Message: fmt.Sprintf("endpoint %q is at version %d, not %d: someone else saved first; read it and reapply your change", name, cur.Version, expectedVersion), Current: cur}
		}
		if err := checkPlan(ctx, q, p.ProjectID, pol.Policy, "preset"); err != nil {
			return err
		}
		cur.Policy, _ = json.Marshal(pol.Policy)
		wasKeyed, before := keyed(cur), cur.EndpointSettings
		cur.EndpointSettings = pol.EndpointSettings
		cur.UpdatedAt = e.nowMs()
		if err := q.EndpointUpdatePolicy(ctx, &store.EndpointUpdatePolicyParams{Endpoint: cur, ExpectedVersion: expectedVersion}); err != nil {
			if errors.Is(err, store.ErrConflict) {
				latest, _ := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: name})
				return &Error{Kind: KindConflict, Message: fmt.Sprintf("endpoint %q changed while saving; read it and reapply your change", name), Current: latest}
			}
			return err
		}
		ep = cur
		if err := e.rampAfterRise(ctx, q, cur, before, cur.UpdatedAt); err != nil {
			return err
		}
		// A keyed endpoint's claims read its flow keys: an endpoint that
		// becomes keyed gets a row for each key with jobs scheduled, and
		// one that stops being keyed drops them.
		if wasKeyed != keyed(cur) {
			if err := q.FlowKeysRebuild(ctx, cur.ID, wasKeyed); err != nil {
				return err
			}
		}
		return e.audit(ctx, q, p, cur.UpdatedAt, "policy.update", "endpoint:"+name,
			fmt.Sprintf("policy of endpoint %s updated to version %d (preset %s, maxConcurrent %d%s)", name, cur.Version, pol.Policy.Preset, cur.MaxConcurrent, keyLimitsText(pol.KeyLimits)))
	})
	if err == nil {
		e.signal(ctx) // capacity or rate limit may have grown
	}
	return ep, storeErr(err, "endpoint "+strconv.Quote(name))
}

// CurrentPolicy extracts the EndpointPolicy of a stored endpoint.
func CurrentPolicy(ep *store.Endpoint) (EndpointPolicy, error) {
	pol, err := backoff.ParsePolicy(ep.Policy)
	if err != nil {
		return EndpointPolicy{}, fmt.Errorf("stored policy of endpoint %q: %w", ep.Name, err)
	}
	return EndpointPolicy{Policy: pol, EndpointSettings: ep.EndpointSettings}, nil
}

// keyLimitsText is the limits per key for the audit log ("" when none).
func keyLimitsText(k wire.KeyLimits) string {
	var parts []string
	if k.KeyMaxConcurrent != nil {
		parts = append(parts, fmt.Sprintf("keyMaxConcurrent %d", *k.KeyMaxConcurrent))
	}
	if k.KeyRateLimitPerMinute != nil {
		parts = append(parts, fmt.Sprintf("keyRateLimitPerMinute %d", *k.KeyRateLimitPerMinute))
	}
	if k.KeyOrdered {
		parts = append(parts, "keyOrdered")
	}
	if k.FairKeys {
		parts = append(parts, "fairKeys")
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// joinOr lists words as "a or b or c".
func joinOr[S ~string](words []S) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = string(w)
	}
	return strings.Join(parts, " or ")
}

// MinBootstrapKeyLen is the shortest --bootstrap-key accepted.
const MinBootstrapKeyLen = 24

// withArticle puts "a" or "an" before a word.
func withArticle(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}
