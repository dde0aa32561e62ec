package interest

// Limits of the interest sets.
const (
	// wantedExtraMin is the size the wanted set's extra map may reach
	// before it is folded into the base even while the base is small.
	wantedExtraMin = 16
)
