package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/discovery"
)

// defaultServices is Curator's and Spring Cloud Zookeeper's base path.
const defaultServices = "/services"

var servicesCmd = &command{
	name:     "services",
	synopsis: "services [PATH] [--json] [--watch [--for D]]",
	summary:  "list the services registered for discovery (Curator's curator-x-discovery, Spring Cloud Zookeeper, Dubbo 3, zkrecipes' discovery) and their instances",
	help: `Lists the services under PATH (default /services), the base path of Apache
Curator's ServiceDiscovery, and each one's instances: id, address and port (and
SSL port), age (since registrationTimeUTC) and whether it is disabled. A node
whose data is not an instance is shown with the reason.

With --watch, zkr follows PATH and prints one line per change: "+" an instance
registered, "~" one changed, "-" one gone, each stamped with the time; with
--json one object a line. It ends on SIGINT, SIGTERM or SIGHUP, or after --for.`,
	example: "  zkr services\n  zkr services /dubbo-apps --json | jq -r '.services[].instances[].address'\n  zkr services --watch",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		asJSON := fs.Bool("json", false, "print JSON for scripts: {path, services: [{name, instances}]}; with --watch one object a line: {time, change, service, instance}")
		watch := fs.Bool("watch", false, "follow PATH and print each change seen until SIGINT or SIGTERM")
		watchFor := fs.Duration("for", 0, "with --watch, stop after this `duration` (default: until a signal)")
		return func(e *env, pos, argv []string, dash bool) int {
			switch {
			case dash:
				return e.fail(usageError("services runs no command"))
			case *watchFor != 0 && !*watch:
				return e.fail(usageError("--for goes with --watch"))
			case *watchFor < 0:
				return e.fail(usageError("--for cannot be negative"))
			}
			if len(pos) == 0 {
				pos = []string{defaultServices}
			}
			p, err := pathArg(pos, nil, false, false)
			if err != nil {
				return e.fail(err)
			}
			if *watch {
				return servicesWatch(e, p, *asJSON, *watchFor)
			}
			// Unlike inspect, a missing base path is no typo to report: it is a
			// registry with no service yet.
			return showWith(e, p, *asJSON, func(ctx context.Context, c *framework.Client) (finding, error) {
				return listServices(ctx, c, p)
			})
		}
	},
}

// serviceList is what `zkr services` prints.
type serviceList struct {
	Path     string        `json:"path"`
	Services []serviceView `json:"services"`
}

type serviceView struct {
	Name      string         `json:"name"`
	Instances []instanceView `json:"instances"`
}

// instanceView is one instance as zkr shows it: the fields people look for.
type instanceView struct {
	ID         string          `json:"id"`
	Address    string          `json:"address"`
	Port       int             `json:"port,omitempty"`
	SSLPort    int             `json:"sslPort,omitempty"`
	Registered *time.Time      `json:"registered,omitempty"`
	Age        string          `json:"age,omitempty"`
	Disabled   bool            `json:"disabled"`
	Type       string          `json:"serviceType,omitempty"`
	URI        string          `json:"uri,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Error      string          `json:"error,omitempty"` // the node's data is not an instance
}

func listServices(ctx context.Context, c *framework.Client, base string) (*serviceList, error) {
	d, err := discovery.New(c, base)
	if err != nil {
		return nil, usageError("%v", err)
	}
	names, err := d.Names(ctx)
	if err != nil {
		return nil, err
	}
	list := &serviceList{Path: base, Services: []serviceView{}}
	for _, name := range names {
		dir := path.Join(base, name)
		ids, _, err := c.Children(ctx, dir)
		switch {
		case errors.Is(err, framework.ErrNoNode):
			continue // its container went with its last instance since the listing
		case err != nil:
			return nil, err
		}
		slices.Sort(ids)
		s := serviceView{Name: name, Instances: []instanceView{}}
		for _, id := range ids {
			data, _, err := c.Get(ctx, path.Join(dir, id))
			switch {
			case errors.Is(err, framework.ErrNoNode):
				continue // gone since the listing
			case err != nil: // an ACL's refusal, the connection: never a service shown without it
				return nil, nodeError(path.Join(dir, id), err)
			}
			s.Instances = append(s.Instances, viewInstance(id, data, time.Now()))
		}
		list.Services = append(list.Services, s)
	}
	return list, nil
}

// viewInstance reads one instance node (named node) as zkr shows it.
func viewInstance(node string, data []byte, now time.Time) instanceView {
	in, err := discovery.ParseInstance(data)
	if err != nil {
		return instanceView{ID: node, Error: err.Error()}
	}
	v := instanceView{ID: in.ID, Address: in.Address, Port: in.Port, SSLPort: in.SSLPort,
		Disabled: in.Disabled, Type: in.Type.String(), Payload: in.Payload}
	if !in.Registered.IsZero() {
		v.Registered = &in.Registered
		v.Age = age(now.Sub(in.Registered))
	}
	v.URI, _ = in.URI()
	return v
}

func (l *serviceList) print(e *env) {
	if len(l.Services) == 0 {
		fmt.Fprintf(e.stdout, "%s: no services\n", l.Path)
		return
	}
	for _, s := range l.Services {
		fmt.Fprintf(e.stdout, "%s (%d)\n", printable(s.Name), len(s.Instances))
		for _, in := range s.Instances {
			fmt.Fprintf(e.stdout, "  %s\n", in.line())
		}
	}
}

// line is the instance on one line: id, address:port, ssl, age, disabled.
func (v instanceView) line() string { return printable(v.fields()) }

func (v instanceView) fields() string {
	if v.Error != "" {
		return v.ID + "  (not an instance: " + v.Error + ")"
	}
	parts := []string{v.ID, v.Address}
	if v.Port != 0 {
		parts[1] += ":" + strconv.Itoa(v.Port)
	}
	if v.SSLPort != 0 {
		parts = append(parts, "ssl "+strconv.Itoa(v.SSLPort))
	}
	if v.Age != "" {
		parts = append(parts, "age "+v.Age)
	}
	if v.Disabled {
		parts = append(parts, "disabled")
	}
	return strings.Join(parts, "  ")
}

// servicesWatch is services --watch: a cache of PATH two levels down (services,
// instances), and a line per instance that changed.
func servicesWatch(e *env, base string, asJSON bool, watchFor time.Duration) int {
	shown := map[string]instanceView{}
	return follow(e, base, 2, watchFor, nil, func(_ context.Context, ca *cache.Cache, dirty bool, conn []cache.Event, _ bool) {
		for _, ev := range conn {
			servicesConnection(e, ev, asJSON)
		}
		if dirty {
			shown = servicesChanges(e, ca, base, shown, asJSON)
		}
	})
}

// servicesChanges prints what differs between the instances shown and the cache's
// copy now, and returns the copy's.
func servicesChanges(e *env, ca *cache.Cache, base string, shown map[string]instanceView, asJSON bool) map[string]instanceView {
	now := time.Now()
	current := map[string]instanceView{}
	for _, name := range ca.Children(base) {
		for _, id := range ca.Children(path.Join(base, name)) {
			if n, ok := ca.Get(path.Join(base, name, id)); ok {
				current[name+"/"+id] = viewInstance(id, n.Data, now)
			}
		}
	}
	keys := map[string]bool{}
	for k := range shown {
		keys[k] = true
	}
	for k := range current {
		keys[k] = true
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		old, was := shown[key]
		v, is := current[key]
		switch {
		case was && !is:
			servicesLine(e, asJSON, now, "-", "removed", key, old)
		case !was && is:
			servicesLine(e, asJSON, now, "+", "added", key, v)
		case was && is && !sameView(old, v):
			servicesLine(e, asJSON, now, "~", "updated", key, v)
		}
	}
	return current
}

func sameView(a, b instanceView) bool {
	a.Age, b.Age = "", ""
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func servicesLine(e *env, asJSON bool, now time.Time, mark, change, key string, v instanceView) {
	service, _, _ := strings.Cut(key, "/")
	stamp := now.UTC().Format("2006-01-02T15:04:05.000Z")
	if asJSON {
		out, _ := json.Marshal(struct {
			Time     string       `json:"time"`
			Change   string       `json:"change"`
			Service  string       `json:"service"`
			Instance instanceView `json:"instance"`
		}{stamp, change, service, v})
		fmt.Fprintf(e.stdout, "%s\n", escapeJSON(out))
		return
	}
	fmt.Fprintf(e.stdout, "%s %s %s  %s\n", stamp, mark, printable(service), v.line())
}

func servicesConnection(e *env, ev cache.Event, asJSON bool) {
	stamp := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	what := strings.ToLower(ev.Type.String())
	if asJSON {
		out, _ := json.Marshal(map[string]string{"time": stamp, "change": what})
		fmt.Fprintf(e.stdout, "%s\n", out)
		return
	}
	fmt.Fprintf(e.stdout, "%s %s\n", stamp, what)
}
