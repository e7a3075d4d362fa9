package sandbox

import (
	"path"
	"slices"
	"strings"
)

// loaderVars are the variables glibc reads to find what it loads or writes by path, each with
// the characters that separate its entries ("" for one path): the dynamic loader's at every
// start, before any of the process's code (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT; LD_ORIGIN_PATH
// stands for $ORIGIN where /proc/self/exe fails; the debug and profile output files), and libc's
// when the program asks (GCONV_PATH: iconv's modules, dlopened; LOCPATH, NLSPATH, TZDIR: locale,
// message catalogue and time zone files it parses). They are glibc's secure-mode list
// (sysdeps/generic/unsecvars.h) less those that name no path (LD_DEBUG, LD_BIND_NOT, LD_HWCAP_MASK,
// GLIBC_TUNABLES…: they change how the image's own files are loaded, never which). The separators
// are the union of glibc's and musl's (an Alpine image's loader): musl splits LD_PRELOAD on any
// isspace and ':' and LD_LIBRARY_PATH on ':' and '\n', so an entry behind a tab or a newline,
// one entry to glibc's reading, was kept unjudged and musl loaded it (atk49b, theory); musl's
// MUSL_LOCPATH is its LOCPATH.
var loaderVars = map[string]string{
	"LD_PRELOAD":        " :\t\n\v\f\r",
	"LD_AUDIT":          ":",
	"LD_LIBRARY_PATH":   ":;\n",
	"MUSL_LOCPATH":      ":",
	"LD_ORIGIN_PATH":    "",
	"LD_DEBUG_OUTPUT":   "",
	"LD_PROFILE_OUTPUT": "",
	"GCONV_PATH":        ":",
	"LOCPATH":           ":",
	"NLSPATH":           ":",
	"TZDIR":             "",
}

// loaderEnvOf is the container's own values of the image's loader variables (imageEnv is the
// image's Env, "NAME=value"), for those that name a place a call can write, and what was removed
// and why. The image's LD_PRELOAD and LD_LIBRARY_PATH acted in the loader of /bin/sh as pid 1,
// and of the watchdog's and wrapper's python3, before any of serve's code: one naming the
// workspace (ENV LD_LIBRARY_PATH=/workspace/lib), or relative (the working directory is the
// workspace: "", as ENV LD_LIBRARY_PATH=/x:$LD_LIBRARY_PATH makes where it was unset), loaded a
// library a call wrote there into them (fix48-g). So an entry is kept only if it is absolute, has
// no ".." (the kernel resolves it through links, not lexically), and is under none of the mounts
// (mounts: the workspace, /tmp and the others serve or the engine makes: where a call writes and
// what outlives it); in LD_PRELOAD and LD_AUDIT a bare name (no "/") is kept too: the loader
// searches the library path for it, which is cleaned. A variable that loses an entry is set to
// what is left ("" when nothing: the loader and libc ignore an empty one); the program gets the
// same (README, Known gaps). Left: an image's own link into the workspace is not seen here, as
// the PATH's is by the entrypoint (serve does not read the image's files).
func loaderEnvOf(imageEnv, mounts []string) (env []string, note string) {
	var notes []string
	for _, kv := range imageEnv {
		name, val, ok := strings.Cut(kv, "=")
		seps, known := loaderVars[name]
		if !ok || !known {
			continue
		}
		if mutated("docker-loader-env-musl-seps") { // glibc's separators alone, as before atk49b
			seps = strings.NewReplacer("\t", "", "\n", "", "\v", "", "\f", "", "\r", "").Replace(seps)
		}
		if val == "" {
			continue // set empty is unset to the loader and libc
		}
		var kept, gone []string
		entries := []string{val}
		if seps != "" {
			entries = strings.FieldsFunc(val, func(r rune) bool { return strings.ContainsRune(seps, r) })
			// FieldsFunc drops empty entries: in a path list "" is the working directory.
			if name != "LD_PRELOAD" && name != "LD_AUDIT" && emptyEntry(val, seps) {
				gone = append(gone, `"" (relative: the working directory)`)
			}
		}
		for _, d := range entries {
			if why := loaderEntryWhy(name, d, mounts); why != "" {
				gone = append(gone, why)
				continue
			}
			kept = append(kept, d)
		}
		if len(gone) == 0 {
			continue
		}
		sep := ":"
		if seps == "" {
			sep = ""
		}
		env = append(env, name+"="+strings.Join(kept, sep))
		notes = append(notes, name+": "+strings.Join(gone, ", "))
	}
	slices.Sort(env)
	slices.Sort(notes)
	return env, strings.Join(notes, "; ")
}

// emptyEntry says whether the list val has an empty entry (one at either end, or two separators
// in a row).
func emptyEntry(val, seps string) bool {
	prev := true
	for _, r := range val {
		sep := strings.ContainsRune(seps, r)
		if sep && prev {
			return true
		}
		prev = sep
	}
	return prev
}

// loaderEntryWhy is why the entry d of the loader variable name is removed, or "" to keep it.
func loaderEntryWhy(name, d string, mounts []string) string {
	if (name == "LD_PRELOAD" || name == "LD_AUDIT") && d != "" && !strings.Contains(d, "/") {
		return ""
	}
	if !strings.HasPrefix(d, "/") {
		return `"` + d + `" (relative: the working directory is the workspace)`
	}
	if slices.Contains(strings.Split(d, "/"), "..") {
		return d + " (has .., which the kernel resolves through links)"
	}
	c := path.Clean(d)
	for _, m := range mounts {
		if c == m || strings.HasPrefix(c, m+"/") || m == "/" {
			return d + " (under the mount " + m + ")"
		}
	}
	return ""
}

// loaderMounts are the container's mounts, where a call writes or the engine does: the workspace
// (whether or not the policy mounts one, as the entrypoint takes it), /tmp and the image's
// VOLUMEs (tmpfs), the egress socket's directory, and the engine's /dev (/dev/shm is writable),
// /proc, /sys and its files in /etc.
func (s spec) loaderMounts() []string {
	ms := []string{workspaceDir, "/tmp", egressMount, "/dev", "/proc", "/sys", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf"}
	for _, v := range s.imageVolumes {
		ms = append(ms, path.Clean(v))
	}
	return ms
}
