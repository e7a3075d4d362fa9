package generate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"github.com/mcpsandbox/mcpsandbox/internal/templates"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Client is one MCP client init can configure (internal/templates/clients.toml).
type Client struct {
	ID           string              `toml:"id"`
	Name         string              `toml:"name"`
	Format       string              `toml:"format"` // "json" or "toml"
	Key          string              `toml:"key"`    // the object (JSON) or table (TOML) holding servers
	DefaultScope string              `toml:"default_scope"`
	Detect       []string            `toml:"detect"`
	Entry        map[string]any      `toml:"entry"` // extra fields of a server entry
	Paths        map[string]string   `toml:"paths"` // scope -> path pattern
	Keys         map[string][]string `toml:"keys"`  // scope -> where the servers object sits, when not at Key
	About        map[string]string   `toml:"about"` // scope -> what it means, said when init writes it
	HTTP         *HTTPFormat         `toml:"http"`  // nil: no HTTP entries (NoHTTP says why)
	NoHTTP       string              `toml:"no_http"`
	Env          *EnvFormat          `toml:"env"`   // nil: servers get the client's own environment
	After        string              `toml:"after"` // a step of the client's own before it starts the server
	// AfterDone: a file of folders the client trusts (Gemini CLI's trustedFolders.json); After
	// is not said when it already trusts the project ("" = always said).
	AfterDone string `toml:"after_done"`
	Remove    string `toml:"remove"` // the client's own command removing server {name} from scope {scope} ("" = none)
	// WorkspaceVar: the variable the client's config expands to the folder it opened
	// (${workspaceFolder}); a portable entry passes it to serve --project ("" = none: the
	// server starts in that folder).
	WorkspaceVar string `toml:"workspace_var"`

	KeyPath []string `toml:"-"` // resolved for a target: Keys[scope] with {project} expanded
}

// HTTPFormat is how a client's config names a server it reaches over streamable HTTP.
type HTTPFormat struct {
	URLKey   string `toml:"url"`       // the key holding the URL
	Type     string `toml:"type"`      // the entry's "type" ("" = none)
	Auth     string `toml:"auth"`      // Authorization value in the client's variable syntax; {var} = the variable
	TokenVar string `toml:"token_var"` // instead of a header: the key naming the token's variable
}

// Clients is the catalogue, in file order (decoded on first use).
var Clients = sync.OnceValue(func() []Client {
	var v struct{ Client []Client }
	b, err := templates.FS.ReadFile("clients.toml")
	if err == nil {
		_, err = toml.Decode(string(b), &v)
	}
	if err != nil {
		panic("internal/templates/clients.toml: " + err.Error()) // embedded data: a build-time mistake
	}
	return v.Client
})

// ClientIDs lists the ids, with their non-default scopes as id:scope.
func ClientIDs() []string {
	var ids []string
	for _, c := range Clients() {
		ids = append(ids, c.ID)
		for _, s := range c.Scopes() {
			if s != c.Scope() {
				ids = append(ids, c.ID+":"+s)
			}
		}
	}
	return ids
}

// Scope is the client's default scope.
func (c Client) Scope() string {
	if c.DefaultScope != "" {
		return c.DefaultScope
	}
	return "user"
}

// Scopes lists where the client keeps configs.
func (c Client) Scopes() []string {
	var s []string
	for k := range c.Paths {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// Target is one config file to write: a client in a scope.
type Target struct {
	Client Client
	Scope  string
	Path   string
	// Repo: the repository's top level its key names, when that is not the project directory
	// (init ran in a subdirectory of a git work tree).
	Repo string
	// Below: the repository's top level, when the target's file lies in the project directory
	// and that is a subdirectory of it: a client opened at the top level does not read it.
	Below string
}

// Env is where paths resolve: the home, config and project directories, and the OS. Repo is
// the directory Claude Code keys its local scope by ("" = Project; see ProjectEnv).
type Env struct {
	Home, ConfigDir, Project, Repo, GOOS string
	LookPath                             func(string) (string, error)
}

// HostEnv is this machine's Env.
func HostEnv(project string) (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, fmt.Errorf("find your home directory: %w (set $HOME)", err)
	}
	if project != "" && !mutated("init-project-missing") {
		// the project's configs (.vscode/mcp.json, .mcp.json, …) go in it, and Claude Code's local
		// scope is keyed by it: a mistyped one would be made, and no client would read it
		if st, err := os.Stat(project); err != nil || !st.IsDir() {
			why := "not a directory"
			if err != nil {
				why = "no such directory"
			}
			return Env{}, fmt.Errorf("--project %s: %s: give the project's directory (where .vscode/mcp.json and .mcp.json go, and by which Claude Code keys its local scope), or leave --project out for the current one", project, why)
		}
	}
	e := Env{Home: home, Project: project, GOOS: runtime.GOOS, LookPath: exec.LookPath}
	switch runtime.GOOS {
	case "darwin":
		e.ConfigDir = filepath.Join(home, "Library", "Application Support")
	case "windows":
		e.ConfigDir = os.Getenv("APPDATA")
	default:
		e.ConfigDir = xdg.Dir("XDG_CONFIG_HOME")
		if e.ConfigDir == "" {
			e.ConfigDir = filepath.Join(home, ".config")
		}
	}
	return e, nil
}

func (e Env) expand(pat string) string {
	pat = strings.ReplaceAll(pat, "{config}", e.ConfigDir)
	pat = strings.ReplaceAll(pat, "{project}", e.Project)
	if strings.HasPrefix(pat, "~/") {
		pat = filepath.Join(e.Home, pat[2:])
	}
	return filepath.FromSlash(pat)
}

// ResolveTarget turns "id" or "id:scope" into the config file to write.
func ResolveTarget(spec string, e Env) (Target, error) {
	id, scope, _ := strings.Cut(spec, ":")
	if !mutated("init-client-case") {
		// "Claude-Code" or "VSCode:Project" as a user types them mean the one client and scope.
		id, scope = strings.ToLower(strings.TrimSpace(id)), strings.ToLower(strings.TrimSpace(scope))
	}
	clients := Clients()
	i := slices.IndexFunc(clients, func(c Client) bool { return c.ID == id })
	if i < 0 {
		return Target{}, fmt.Errorf("client %q is unknown: use one of %s", spec, strings.Join(ClientIDs(), ", "))
	}
	c := clients[i]
	if scope == "" {
		scope = c.Scope()
	}
	pat, ok := c.Paths[scope]
	if !ok && scope == "workspace" {
		// VS Code's own word for the project's .vscode/mcp.json (trial32 F21)
		scope = "project"
		pat, ok = c.Paths[scope]
	}
	if !ok {
		return Target{}, fmt.Errorf("client %s has no %q scope: use %s", id, scope, strings.Join(c.Scopes(), " or "))
	}
	t := Target{Client: c, Scope: scope, Path: e.expand(pat)}
	if strings.HasPrefix(pat, "{project}") && e.Repo != "" && policy.RealPath(e.Repo) != policy.RealPath(e.Project) {
		t.Below = policy.RealPath(e.Repo) // a project file written in a repository's subdirectory
	}
	if keys, ok := c.Keys[scope]; ok {
		t.Client.KeyPath = make([]string, len(keys))
		for i, k := range keys {
			switch k {
			case "{project}":
				// Claude Code keys projects by the directory's real path, as getcwd gives it.
				k = policy.RealPath(e.Project)
			case "{repo}":
				// ... and its local scope by the git repository that directory is in (ProjectEnv)
				k = policy.RealPath(e.Project)
				if e.Repo != "" && policy.RealPath(e.Repo) != k {
					k = policy.RealPath(e.Repo)
					t.Repo = k
				}
			}
			t.Client.KeyPath[i] = k
		}
	}
	return t, nil
}

// About says what the target's scope means ("" when the catalogue does not say), and what its
// key is when that is not the project directory, for a stdio entry.
func (t Target) About() string { return t.AboutFor(ServerEntry{}) }

// AboutFor is About for the entry written there: a URL (with the name of its token's variable)
// or a command.
func (t Target) AboutFor(e ServerEntry) string {
	about := t.Client.About[t.Scope]
	if strings.HasPrefix(t.Client.Paths[t.Scope], "{project}") && !strings.Contains(about, "shared with whoever") && !mutated("init-project-file-silent") {
		// a file in the project is one a repository commits (trial30 F16: VS Code's default)
		// and what to do about it (trial38 F1: said, but not whether to commit it)
		holds := "this machine's absolute paths: do not commit it (each teammate runs init in their own clone: README, \"Using mcpsandbox in a team repository\"; init --portable writes entries a team can commit)"
		if e.Portable && !mutated("init-portable-note-absolute") {
			holds = "no machine paths (it runs `mcpsandbox serve --project`, which serves each user's own policy for their checkout): commit it; each teammate runs the same init --portable in their clone"
		} else if e.URL != "" {
			holds = "the URL of the serve --http it reaches"
			if e.TokenEnv != "" {
				holds += " and the name of the variable holding its token (" + e.TokenEnv + "), not the token"
			}
			holds += ": commit it only if every teammate runs serve --http at that URL"
		}
		shared := "a file in the project (" + t.Path + "), shared with whoever clones it if it is committed: it holds " + holds
		if about == "" {
			about = shared
		} else {
			about += "; " + shared
		}
	}
	if t.Repo != "" {
		about += fmt.Sprintf("; %s keys its local scope by the repository's top level, %s (not the current directory)", t.Client.Name, t.Repo)
	}
	if t.Below != "" {
		// the class of trial30 F4: an entry in a place the client may not look
		about += fmt.Sprintf("; %s reads it when this directory is the folder it opens or starts in, not the repository's top level %s (--project %s writes it there)",
			t.Client.Name, t.Below, shellword.Quote(t.Below))
	}
	return about
}

// Where names the file, and the place inside it when the servers sit deeper than one key.
func (t Target) Where() string {
	if len(t.Client.KeyPath) > 1 {
		return fmt.Sprintf("%s (under %s)", t.Path, strings.Join(t.Client.KeyPath, " → "))
	}
	return t.Path
}

// Detect lists the clients that look installed here: a config directory or a binary on PATH.
func Detect(e Env) []string {
	var found []string
	for _, c := range Clients() {
		for _, d := range c.Detect {
			hit := false
			if bin, ok := strings.CutPrefix(d, "bin:"); ok {
				if e.LookPath != nil {
					_, err := e.LookPath(bin)
					hit = err == nil
				}
			} else if _, err := os.Stat(e.expand(d)); err == nil {
				hit = true
			}
			if hit {
				found = append(found, detectScopes(c, e)...)
				break
			}
		}
	}
	return found
}

// detectScopes is what the wizard preselects of a client found here: its default scope, unless
// that scope's config does not exist and another scope's does (VS Code's user mcp.json with no
// .vscode/mcp.json in this project): then the scopes whose configs exist, where the user keeps
// their servers, and not a new file in the project.
func detectScopes(c Client, e Env) []string {
	exists := func(spec string) bool {
		t, err := ResolveTarget(spec, e)
		if err != nil {
			return false
		}
		_, err = os.Stat(t.Path)
		return err == nil
	}
	if mutated("init-detect-scope") || exists(c.ID) {
		return []string{c.ID}
	}
	var ids []string
	for _, s := range c.Scopes() {
		if s != c.Scope() && exists(c.ID+":"+s) {
			ids = append(ids, c.ID+":"+s)
		}
	}
	if len(ids) == 0 {
		return []string{c.ID}
	}
	return ids
}

// ServerEntry is what a client runs: this binary, serve, the policy, and the names of the
// variables serve needs from the client's environment (the e2b key). With URL set it is instead
// a server the client reaches over streamable HTTP, sending the bearer token it reads from the
// environment variable TokenEnv ("" = no token): the token itself is never written.
type ServerEntry struct {
	Command string
	Args    []string
	Env     []string // variables the server needs from the client: their names, in its syntax
	Set     []string // NAME=value: variables the entry sets to a value, whatever the client's own (not secrets)

	URL      string
	TokenEnv string

	// Portable: the entry runs `mcpsandbox serve --project` by name, holding no machine path,
	// for a project file a team commits (init --portable); Dir is the checkout its start check
	// runs in, as a client opened there starts it (never written).
	Portable bool
	Dir      string
}

// PortableCommand is the command a portable entry runs: found on each user's PATH.
const PortableCommand = "mcpsandbox"

// NewPortableEntry is the portable entry for the checkout at dir: `mcpsandbox serve --project`,
// started in dir.
func NewPortableEntry(dir string) ServerEntry {
	return ServerEntry{Command: PortableCommand, Args: []string{"serve", "--project"}, Portable: true, Dir: dir}
}

// For is the entry as client c writes it: a portable entry names the folder c opened in c's own
// variable where it has one, so a server c starts elsewhere still finds the checkout.
func (s ServerEntry) For(c Client) ServerEntry {
	if !s.Portable || c.WorkspaceVar == "" {
		return s
	}
	s.Args = append(slices.Clip(s.Args), c.WorkspaceVar)
	return s
}

// NewHTTPEntry is the entry for a running `serve --http` at url.
func NewHTTPEntry(url, tokenEnv string) ServerEntry { return ServerEntry{URL: url, TokenEnv: tokenEnv} }

// HTTPError: the client has no way to reach a server over HTTP from its config file.
type HTTPError struct{ Client Client }

func (e *HTTPError) Error() string {
	return fmt.Sprintf("client %s cannot take an HTTP entry: %s", e.Client.ID, e.Client.NoHTTP)
}

// CheckHTTP refuses an HTTP entry for a client that has none.
func (c Client) CheckHTTP(e ServerEntry) error {
	if e.URL != "" && c.HTTP == nil {
		return &HTTPError{Client: c}
	}
	return nil
}

// NewServerEntry is the entry for a policy file, both paths absolute.
func NewServerEntry(bin, policyPath string) ServerEntry {
	return ServerEntry{Command: bin, Args: []string{"serve", "--policy", policyPath}}
}
