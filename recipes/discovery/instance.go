package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
)

// ServiceType is Curator's serviceType: it says which kind of node holds the
// instance.
type ServiceType int

const (
	// Dynamic is an ephemeral node: the instance goes with its process's session (and
	// Register puts it back under the next one). The default.
	Dynamic ServiceType = iota
	// DynamicSequential is an ephemeral sequential node. Its node name is not the id:
	// find it by listing the service (Instances, a Provider), not with Instance.
	DynamicSequential
	// Static is a persistent node, deleted by Close.
	Static
	// Permanent is a persistent node, deleted by Close, as Curator does.
	Permanent
)

var typeNames = [...]string{"DYNAMIC", "DYNAMIC_SEQUENTIAL", "STATIC", "PERMANENT"}

// String is the type's name in Curator's JSON, e.g. "DYNAMIC".
func (t ServiceType) String() string {
	if t < 0 || int(t) >= len(typeNames) {
		return "ServiceType(" + strconv.Itoa(int(t)) + ")"
	}
	return typeNames[t]
}

// Instance is one instance of a service, stored as Curator's ServiceInstance JSON.
type Instance struct {
	Name       string          // the service's name: a node name
	ID         string          // unique within the service: a node name
	Address    string          // "" is JSON null
	Port       int             // 0: none (JSON null)
	SSLPort    int             // 0: none (JSON null)
	Payload    json.RawMessage // stored and returned as is, Java's "@class" included
	Registered time.Time       // registrationTimeUTC, milliseconds
	Type       ServiceType
	URISpec    string // Curator's template, e.g. "{scheme}://{address}:{port}/api"; "" for none
	Disabled   bool   // Curator's enabled=false; the field is written only when true
}

// wire is ServiceInstance as Curator's Jackson mapper writes it: these fields in
// this order, unset ones as null.
type wire struct {
	Name         *string         `json:"name"`
	ID           *string         `json:"id"`
	Address      *string         `json:"address"`
	Port         *int            `json:"port"`
	SSLPort      *int            `json:"sslPort"`
	Payload      json.RawMessage `json:"payload"`
	Registration int64           `json:"registrationTimeUTC"`
	ServiceType  *string         `json:"serviceType"`
	URISpec      *wireSpec       `json:"uriSpec"`
	// Enabled is written only when false: readers older than CURATOR-275 that fail
	// on unknown fields then fail only on disabled instances, which they could not
	// have honoured anyway (#914).
	Enabled *bool `json:"enabled,omitempty"`
}

type wireSpec struct {
	Parts []part `json:"parts"`
}

// check is what Register and Update require of an instance.
func (in Instance) check() error {
	if err := args.CheckName(in.Name); err != nil {
		return fmt.Errorf("%w: name: %w", ErrInvalid, err)
	}
	if err := args.CheckName(in.ID); err != nil {
		return fmt.Errorf("%w: id: %w", ErrInvalid, err)
	}
	for _, p := range []struct {
		what string
		port int
	}{{"port", in.Port}, {"SSL port", in.SSLPort}} {
		if p.port < 0 || p.port > 65535 {
			return fmt.Errorf("%w: %s %d is not between 0 (none) and 65535", ErrInvalid, p.what, p.port)
		}
	}
	if in.Type < Dynamic || in.Type > Permanent {
		return fmt.Errorf("%w: unknown service type %d", ErrInvalid, int(in.Type))
	}
	if _, err := parseSpec(in.URISpec); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(in.Payload) > 0 && !json.Valid(in.Payload) {
		return fmt.Errorf("%w: the payload is not JSON", ErrInvalid)
	}
	return nil
}

// marshal writes the instance as Curator does. The instance has passed check.
func (in Instance) marshal() ([]byte, error) {
	w := wire{
		Name: &in.Name, ID: &in.ID,
		Registration: millis(in.Registered),
		ServiceType:  &typeNames[in.Type],
	}
	if in.Address != "" {
		w.Address = &in.Address
	}
	if in.Port != 0 {
		w.Port = &in.Port
	}
	if in.SSLPort != 0 {
		w.SSLPort = &in.SSLPort
	}
	if len(in.Payload) > 0 {
		w.Payload = in.Payload
	}
	if in.URISpec != "" {
		parts, _ := parseSpec(in.URISpec)
		w.URISpec = &wireSpec{Parts: parts}
	}
	if in.Disabled {
		w.Enabled = new(bool)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Jackson writes <, > and & as they are
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ParseInstance reads an instance node's data, as Instances and a Provider do (for
// programs that read the nodes themselves, such as zkr services): an error wrapping
// ErrBadInstance when it is not an instance's JSON.
func ParseInstance(data []byte) (Instance, error) { return unmarshal(data) }

// unmarshal reads what every Curator version, Spring Cloud Zookeeper and Dubbo 3
// write: unknown fields are ignored, a missing serviceType is DYNAMIC, a missing
// enabled is true, and the payload may be any JSON.
func unmarshal(data []byte) (Instance, error) {
	var pw *wire // nil after JSON null, which is no instance (Jackson reads it as null too)
	if err := json.Unmarshal(data, &pw); err != nil {
		return Instance{}, fmt.Errorf("%w: %w", ErrBadInstance, err)
	}
	if pw == nil {
		return Instance{}, fmt.Errorf("%w: null", ErrBadInstance)
	}
	w := *pw
	in := Instance{
		Name: deref(w.Name), ID: deref(w.ID), Address: deref(w.Address),
		Port: deref(w.Port), SSLPort: deref(w.SSLPort),
		Registered: time.UnixMilli(w.Registration).UTC(),
		Disabled:   w.Enabled != nil && !*w.Enabled,
	}
	if w.Registration == 0 {
		in.Registered = time.Time{}
	}
	if string(w.Payload) != "null" && len(w.Payload) > 0 {
		in.Payload = w.Payload
	}
	if w.ServiceType != nil {
		t, ok := typeOf(*w.ServiceType)
		if !ok {
			return Instance{}, fmt.Errorf("%w: unknown serviceType %q", ErrBadInstance, *w.ServiceType)
		}
		in.Type = t
	}
	if w.URISpec != nil {
		in.URISpec = specString(w.URISpec.Parts)
	}
	return in, nil
}

func typeOf(name string) (ServiceType, bool) {
	for t, n := range typeNames {
		if n == name {
			return ServiceType(t), true
		}
	}
	return 0, false
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// millis is t in Curator's registrationTimeUTC: milliseconds since the epoch, 0 for
// the zero time.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
