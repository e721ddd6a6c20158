package discovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
)

// Discovery is the services registered under one base path (Curator's
// ServiceDiscovery): it registers instances, queries them, and makes providers that
// follow one service each. It holds no state of its own: make as many as needed.
type Discovery struct {
	c    *framework.Client
	base string
	log  *slog.Logger
}

// New is the discovery of the services under basePath (Curator's default and
// Spring Cloud Zookeeper's is "/services"). Nothing is sent to ZooKeeper.
func New(c *framework.Client, basePath string, opts ...Option) (*Discovery, error) {
	if err := args.Check(c, basePath); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	o := options{log: c.ForRecipes().Logger()}
	if err := args.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return &Discovery{c: c, base: basePath, log: o.log}, nil
}

// Names lists the services, sorted: none when the base path does not exist. If ctx
// ends first, Names returns its error.
func (d *Discovery) Names(ctx context.Context) ([]string, error) {
	names, err := d.list(ctx, d.base)
	if err != nil {
		return nil, fmt.Errorf("discovery: names in %s: %w", d.base, err)
	}
	return names, nil
}

// Instances reads every instance of the service, sorted by id: none when the
// service does not exist. A node whose data is not an instance is left out and
// logged. If ctx ends first, Instances returns its error.
func (d *Discovery) Instances(ctx context.Context, name string) ([]Instance, error) {
	if err := args.CheckName(name); err != nil {
		return nil, fmt.Errorf("%w: name: %w", ErrInvalid, err)
	}
	dir := d.servicePath(name)
	ids, err := d.list(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("discovery: instances of %s: %w", dir, err)
	}
	var out []Instance
	for _, id := range ids {
		in, err := d.read(ctx, path.Join(dir, id))
		switch {
		case errors.Is(err, ErrNotFound): // gone since the listing
		case errors.Is(err, ErrBadInstance):
			d.log.Warn("discovery: skipping a node that is not an instance", "path", path.Join(dir, id), "err", err)
		case err != nil:
			return nil, err
		default:
			out = append(out, in)
		}
	}
	sortInstances(out)
	return out, nil
}

// Instance reads the instance of the service with the id: ErrNotFound when there is
// none, an error wrapping ErrBadInstance when its node holds something else. If ctx
// ends first, Instance returns its error.
func (d *Discovery) Instance(ctx context.Context, name, id string) (Instance, error) {
	if err := args.CheckName(name); err != nil {
		return Instance{}, fmt.Errorf("%w: name: %w", ErrInvalid, err)
	}
	if err := args.CheckName(id); err != nil {
		return Instance{}, fmt.Errorf("%w: id: %w", ErrInvalid, err)
	}
	return d.read(ctx, d.instancePath(name, id))
}

func (d *Discovery) read(ctx context.Context, p string) (Instance, error) {
	data, _, err := d.c.Get(ctx, p)
	if errors.Is(err, framework.ErrNoNode) {
		return Instance{}, fmt.Errorf("%w: %s", ErrNotFound, p)
	}
	if err != nil {
		return Instance{}, fmt.Errorf("discovery: read %s: %w", p, err)
	}
	in, err := unmarshal(data)
	if err != nil {
		return Instance{}, fmt.Errorf("%s: %w", p, err)
	}
	return in, nil
}

// list is p's children, sorted; none when p does not exist.
func (d *Discovery) list(ctx context.Context, p string) ([]string, error) {
	names, _, err := d.c.Children(ctx, p)
	if errors.Is(err, framework.ErrNoNode) {
		return nil, nil
	}
	slices.Sort(names)
	return names, err
}

func (d *Discovery) servicePath(name string) string { return path.Join(d.base, name) }

func (d *Discovery) instancePath(name, id string) string { return path.Join(d.base, name, id) }

func sortInstances(ins []Instance) {
	slices.SortFunc(ins, func(a, b Instance) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
}
