package wslayer

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// Django imports the modules its settings name as strings (attack round atk45a, F8): a
// wsgi.py's os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'mysite.settings'), the settings'
// INSTALLED_APPS = ['polls'] (each app's package: its models, admin and apps modules are
// imported by convention), ROOT_URLCONF = 'mysite.urls', MIDDLEWARE, a urls.py's
// include('polls.urls'). Read as literals, none named a file, and polls/ stayed the call's to
// rewrite though `gunicorn mysite.wsgi` imported it. The strings of those settings (and only
// those: a DATABASES NAME 'db.sqlite3' is data) are followed as modules from the settings'
// base (the directory above its top package, where manage.py and gunicorn put it on sys.path)
// and the program's directory; an app's package in the workspace is protected whole.

// djangoKey starts a setting or call whose strings name modules Django imports; the lists
// INSTALLED_APPS is added up from (cookiecutter-django's LOCAL_APPS, THIRD_PARTY_APPS) are *_APPS.
var djangoKey = lazy.Regexp(`\b(?:DJANGO_SETTINGS_MODULE|[A-Z][A-Z0-9_]*_APPS|ROOT_URLCONF|WSGI_APPLICATION|ASGI_APPLICATION|` +
	`MIDDLEWARE|AUTHENTICATION_BACKENDS|DEFAULT_AUTO_FIELD|include[ \t]*\()`)

// maxDjangoSpan bounds the text read after a key for its value.
const maxDjangoSpan = 64 << 10

// djangoNames follows the modules the Django settings (or urls) in the program t (read from dir)
// name by their strings.
func (f *follower) djangoNames(t todoFile, dir, text string) {
	if mutated("workspace-follow-django-settings") {
		return
	}
	locs := djangoKey().FindAllStringIndex(text, -1)
	if locs == nil {
		return
	}
	bases := uniq(pyTopBase(filepath.Dir(t.path)), dir)
	for _, l := range locs {
		from := l[1]
		if q := l[0] - 1; q >= 0 && from < len(text) && (text[q] == '\'' || text[q] == '"') && text[from] == text[q] {
			from++ // the key a string itself: setdefault('DJANGO_SETTINGS_MODULE', 'mysite.settings')
			if r := strings.TrimLeft(text[from:], " \t"); strings.HasPrefix(r, "]") {
				from = len(text) - len(r) + 1 // os.environ["DJANGO_SETTINGS_MODULE"] = "mysite.settings"
			}
		}
		span := djangoSpan(text[from:min(len(text), from+maxDjangoSpan)])
		for at := 0; at < len(span); {
			lit, next, ok := f.nextLiteral(span, at)
			at = next
			if !ok {
				break
			}
			if lit == "DJANGO_SETTINGS_MODULE" || !pyDotted().MatchString(lit) {
				continue
			}
			for _, b := range bases {
				f.appModule(t.by, b, lit, t.depth)
				top, _, _ := strings.Cut(lit, ".")
				if d := f.g.wsSpelled(filepath.Join(b, top)); strings.HasPrefix(d, f.g.ws+"/") {
					if st, err := os.Stat(d); err == nil && st.IsDir() {
						f.add(d, t.by) // an app's package: Django imports its modules by convention
					}
				}
			}
		}
	}
}

// djangoSpan is the value after a key: to the end of its statement (a line break outside
// brackets) or the bracket that closes what the key is in (`setdefault('…', 'x')`).
func djangoSpan(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth < 0 {
				return s[:i]
			}
		case '\n':
			if depth == 0 && strings.TrimSpace(s[:i]) != "" && !strings.HasSuffix(strings.TrimRight(s[:i], " \t"), "\\") {
				return s[:i]
			}
		}
	}
	return s
}

// pyTopBase is the directory above the package holding dir (its __init__.py files up): where a
// module of that package is imported from.
func pyTopBase(dir string) string {
	for regular(filepath.Join(dir, "__init__.py")) && filepath.Dir(dir) != dir {
		dir = filepath.Dir(dir)
	}
	return dir
}
