//go:build !linux && !darwin

package generate

// swap: no exchange of two names in one step here; the caller renames, and checks the file it
// held open (an in-place write in the window is seen; a rename over the file in it is not).
func swap(a, b string) (bool, error) { return false, nil }

// renameNew: no rename that refuses an existing target here; the caller checks, then renames.
func renameNew(a, b string) (bool, error) { return false, nil }
