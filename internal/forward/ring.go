package forward

import (
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// pointsPerMember is how many points each member has on the ring. More
// points spread keys more evenly (the share of each of N members stays
// within a few percent of 1/N with 256) at the cost of a larger table.
const pointsPerMember = 256

// Ring is a consistent-hash ring: each member owns the keys from each of
// its points, placed by hashing the member's name, up to the next point
// clockwise. Adding a member to N moves about 1/(N+1) of the keys, all
// to the new member; removing one moves only its keys. The same members
// give the same ring in every process, whatever their order.
type Ring struct {
	members []string // sorted
	points  []ringPoint
}

type ringPoint struct {
	hash   uint64
	member int32
}

// NewRing returns the ring of the members; duplicates count once.
func NewRing(members []string) *Ring {
	m := slices.Clone(members)
	slices.Sort(m)
	m = slices.Compact(m)
	r := &Ring{members: m, points: make([]ringPoint, 0, len(m)*pointsPerMember)}
	buf := make([]byte, 0, 64)
	for i, name := range m {
		for p := range pointsPerMember {
			buf = append(append(buf[:0], name...), '#')
			buf = strconv.AppendInt(buf, int64(p), 10)
			r.points = append(r.points, ringPoint{hash: xxhash.Sum64(buf), member: int32(i)})
		}
	}
	slices.SortFunc(r.points, func(a, b ringPoint) int {
		if a.hash != b.hash {
			if a.hash < b.hash {
				return -1
			}
			return 1
		}
		return int(a.member - b.member)
	})
	return r
}

// Members returns the ring's members, sorted; Shard's values index it.
// The slice is the ring's: do not change it.
func (r *Ring) Members() []string { return r.members }

// Len returns the number of members.
func (r *Ring) Len() int { return len(r.members) }

// Shard returns the index in Members of the member that owns key: the
// owner of the first point at or after key, wrapping around. Keys are
// hashes already (otlpwire's route keys), spread over all 64 bits. A
// ring without members returns -1.
func (r *Ring) Shard(key uint64) int {
	if len(r.points) == 0 {
		return -1
	}
	i, _ := slices.BinarySearchFunc(r.points, key, func(p ringPoint, k uint64) int {
		if p.hash < k {
			return -1
		}
		if p.hash > k {
			return 1
		}
		return 0
	})
	if i == len(r.points) {
		i = 0
	}
	return int(r.points[i].member)
}

// Owner returns the member that owns key, or "" for an empty ring.
func (r *Ring) Owner(key uint64) string {
	if s := r.Shard(key); s >= 0 {
		return r.members[s]
	}
	return ""
}
