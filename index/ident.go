package index

// identParts appends to out the words of an identifier, as byte ranges of
// word: the pieces between underscores, and between dots that do not
// stand between two digits (pay_db_stage → pay, db, stage; api.v2 → api,
// v2; flags.yaml → flags, yaml). Code, paths and configuration write such
// a name whole where prose spells its words out; indexing the words beside
// the name lets the one meet the other. It appends nothing for a word of
// one piece, for a dotted number (3.14, 1.15), or for initials, pieces of
// one character each (J.K, e.g): an abbreviation, not a name.
//
// A colon between two letters does not split a word: it joins what prose
// writes as one name (CS:GO). Nor does a change of case: camelCase names
// are the code's own vocabulary (functions and types: WithContext,
// SetLimit), made of generic verbs and nouns that prose about other things
// shares, so their words would tie a session's code to lessons it does
// not bear on.
func identParts(out [][2]int, word string) [][2]int {
	n := len(out)
	start := 0
	split, initials := false, true
	for i := 0; i <= len(word); i++ {
		if i < len(word) && !splitsAt(word, i) {
			continue
		}
		split = split || i < len(word)
		if i > start {
			out = append(out, [2]int{start, i})
			initials = initials && i-start == 1
		}
		start = i + 1
	}
	if !split || initials {
		return out[:n]
	}
	return out
}

// splitsAt reports whether word's byte i separates two of its words.
func splitsAt(word string, i int) bool {
	switch word[i] {
	case '_':
		return true
	case '.':
		return !(i > 0 && isDigit(word[i-1]) && i+1 < len(word) && isDigit(word[i+1]))
	}
	return false
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
