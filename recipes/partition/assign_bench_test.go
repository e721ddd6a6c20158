package partition

import (
	"fmt"
	"testing"
)

// BenchmarkAssign times one Assign at the sizes of make bench-scale's partitioner
// and beyond: from nothing (every item placed by rendezvous, as when the first
// member starts) and after a join (a settled assignment over one member fewer).
func BenchmarkAssign(b *testing.B) {
	for _, size := range assignSizes {
		items, members := names("job", size[0]), names("host", size[1])
		b.Run(fmt.Sprintf("start/%d×%d", size[0], size[1]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Assign(items, members, nil)
			}
		})
		settled := Assign(items, members[1:], nil)
		b.Run(fmt.Sprintf("join/%d×%d", size[0], size[1]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Assign(items, members, settled)
			}
		})
	}
}

// assignSizes are items × members, make bench-scale's partitioner's and larger.
var assignSizes = [][2]int{{24, 4}, {200, 10}, {2000, 50}, {2000, 2000}, {5000, 2000}}
