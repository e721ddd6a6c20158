package integration

import (
	"math"
	"runtime"
	"slices"
	"strings"
)

// The soak judges the clients' heap, not the whole process's: the run keeps a record
// of everything it did (each counter call for porcupine, each acknowledged witness
// write, each value a follower heard), and that record grows with the run by design.
// runtime.MemProfile says where each live allocation was made. An allocation is the
// test's own when the innermost frame of this module on its stack is the test's code
// (this package, and zktest's servers and proxies); it is the clients' otherwise:
// the library's code, with go-zookeeper's and the runtime's under it. A listener
// callback the test wrote counts as the test's.

const modulePrefix = "github.com/zkrecipes/zkrecipes/"

var testPrefixes = []string{modulePrefix + "integration", modulePrefix + "zktest"}

// heapSplit is the live heap, in bytes, split between the clients and the test.
type heapSplit struct{ clients, test float64 }

// heapOwners remembers, per return address, which code the innermost of its frames
// from this module belongs to (inlining can put several frames at one address):
// resolving frames is the costly part, and the addresses repeat.
type heapOwners map[uintptr]owner

type owner uint8

const (
	noOwner owner = iota // no frame of this module
	clientsOwn
	testOwns
)

// take reads the live heap after a collection (the profile describes the heap as of
// the last completed one) and splits it.
func (o heapOwners) take() heapSplit {
	runtime.GC()
	n, _ := runtime.MemProfile(nil, false)
	var recs []runtime.MemProfileRecord
	for {
		recs = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(recs, false); ok {
			recs = recs[:n]
			break
		}
	}
	var s heapSplit
	for i := range recs {
		bytes := inUse(&recs[i])
		if o.testOwns(recs[i].Stack()) {
			s.test += bytes
		} else {
			s.clients += bytes
		}
	}
	return s
}

// inUse estimates the live bytes a profile record stands for: the profile samples
// one allocation per runtime.MemProfileRate bytes on average, so a record is scaled
// up as pprof does, by the chance that an allocation of its mean size was sampled.
func inUse(r *runtime.MemProfileRecord) float64 {
	if r.AllocObjects == 0 || r.InUseBytes() == 0 {
		return 0
	}
	rate := float64(runtime.MemProfileRate)
	if rate <= 1 {
		return float64(r.InUseBytes())
	}
	mean := float64(r.AllocBytes) / float64(r.AllocObjects)
	return float64(r.InUseBytes()) / (1 - math.Exp(-mean/rate))
}

// testOwns reports whether the innermost frame of this module on stack is the test's.
func (o heapOwners) testOwns(stack []uintptr) bool {
	for _, pc := range stack {
		who, ok := o[pc]
		if !ok {
			who = ownerAt(pc)
			o[pc] = who
		}
		if who != noOwner {
			return who == testOwns
		}
	}
	return false
}

func ownerAt(pc uintptr) owner {
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := frames.Next()
		switch {
		case slices.ContainsFunc(testPrefixes, func(p string) bool { return strings.HasPrefix(f.Function, p) }):
			return testOwns
		case strings.HasPrefix(f.Function, modulePrefix):
			return clientsOwn
		case !more:
			return noOwner
		}
	}
}
