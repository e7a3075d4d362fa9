// Package shellword quotes a word for a POSIX shell, for the commands our messages tell a user
// to copy (mkdir -p, verify --policy, a client's remove command): a path with a space or a quote
// must paste as one word.
package shellword

import "strings"

// safe is what a POSIX shell never splits, expands or treats specially inside an argument.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./_-+,:=@"

// Quote returns s as is when every byte is safe, else in single quotes (a ' inside as '\”).
func Quote(s string) string {
	if s != "" && strings.Trim(s, safe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
