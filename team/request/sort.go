package request

import "slices"

func sortByOpened(rs []Request) {
	slices.SortFunc(rs, func(a, b Request) int { return a.Opened.Compare(b.Opened) })
}
