package cache

import (
	"context"
	"reflect"
	"sync"

	"github.com/go-zookeeper/zk"
)

// shardSize is how many watches one goroutine waits on.
const shardSize = 64

// watch is a watch set by one of the cache's reads: go-zookeeper's channel, which
// receives one event and closes, and what it watches.
type watch struct {
	ch    <-chan zk.Event
	e     *entry
	kind  readKind
	shard *shard
}

// watchMux waits on every armed watch of a cache without a goroutine per node:
// go-zookeeper gives a channel per watch, and a goroutine per shard of shardSize
// channels selects over its own (reflect.Select), so a firing costs one select over
// a shard, and an idle tree costs one parked goroutine per shardSize watches.
// Its methods and shards' n belong to the cache's loop.
type watchMux struct {
	ctx     context.Context
	running *sync.WaitGroup
	fired   func(watch, zk.Event) // called on a shard's goroutine; must not block
	shards  []*shard
}

type shard struct {
	add chan watch
	n   int // watches handed to it and not fired yet, as the loop counts them
}

// add hands w to a shard with room, starting one if none has.
func (m *watchMux) add(w watch) {
	var s *shard
	for _, sh := range m.shards {
		if sh.n < shardSize {
			s = sh
			break
		}
	}
	if s == nil {
		s = &shard{add: make(chan watch)}
		m.shards = append(m.shards, s)
		m.running.Add(1)
		go m.run(s)
	}
	w.shard = s
	select {
	case s.add <- w:
		s.n++
	case <-m.ctx.Done():
	}
}

// run waits on the shard's watches until the cache closes; the watches still armed
// then are left to go-zookeeper, which drops their events.
func (m *watchMux) run(s *shard) {
	defer m.running.Done()
	cases := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(m.ctx.Done())},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.add)},
	}
	watches := []watch{{}, {}}
	for {
		i, v, _ := reflect.Select(cases)
		switch i {
		case 0:
			return
		case 1:
			w := v.Interface().(watch)
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.ch)})
			watches = append(watches, w)
		default:
			ev, _ := v.Interface().(zk.Event) // a channel closed without an event reads as a zero Event
			m.fired(watches[i], ev)
			last := len(cases) - 1
			cases[i], watches[i] = cases[last], watches[last]
			cases, watches = cases[:last], watches[:last]
		}
	}
}
