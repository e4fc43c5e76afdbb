package fallbacks

import "math"

// Similarity parameters; the package doc explains the rule.
const (
	similarityThreshold = 0.3
	nameWeight          = 0.7
	verbWeight          = 0.5
	maxSimilar          = 3
)

// profile is what similarity compares of one tool.
type profile struct {
	name []string // words of the name, in order
	set  []string // distinct name words, sorted
	all  []string // distinct name and description words, sorted
}

// newProfile builds the profile of a tool from its (tool part of the) name and its description.
func newProfile(name, description string) profile {
	n := words(name)
	return profile{name: n, set: wordSet(n), all: wordSet(n, words(description))}
}

// verbClass is +1 when the first verb of the name reads, -1 when it writes, 0 when it has none.
func (p profile) verbClass() int {
	for _, w := range p.name {
		if readVerbs[w] {
			return 1
		}
		if writeVerbs[w] {
			return -1
		}
	}
	return 0
}

// similarity scores b as a stand-in for a, between 0 and 1, rounded to 3 decimals so that
// comparisons do not depend on floating-point noise.
func similarity(a, b profile) float64 {
	s := nameWeight*weightedJaccard(a.set, b.set) + (1-nameWeight)*weightedJaccard(a.all, b.all)
	if ca, cb := a.verbClass(), b.verbClass(); ca != 0 && cb != 0 && ca != cb {
		s /= 2
	}
	return math.Round(s*1000) / 1000
}

// weightedJaccard is the shared weight of two sorted sets over their total weight; verbs weigh
// verbWeight, other words 1.
func weightedJaccard(a, b []string) float64 {
	var shared, total float64
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			total += wordWeight(a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			total += wordWeight(b[j])
			j++
		default:
			w := wordWeight(a[i])
			shared += w
			total += w
			i++
			j++
		}
	}
	if total == 0 {
		return 0
	}
	return shared / total
}

// wordWeight is the weight of one word in weightedJaccard.
func wordWeight(w string) float64 {
	if readVerbs[w] || writeVerbs[w] {
		return verbWeight
	}
	return 1
}
