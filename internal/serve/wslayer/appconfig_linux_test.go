package wslayer

import (
	"fmt"
	"testing"
)

func appHook(cmd string, kv ...string) map[string]string {
	m := map[string]string{".claude/settings.json": `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":` +
		fmt.Sprintf("%q", `cd "$CLAUDE_PROJECT_DIR" && `+cmd) + `}]}]}}`}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// What an app server imports is placed by its environment too (atk45a F8): uvicorn reads its
// options from UVICORN_* variables (UVICORN_APP_DIR, the app from UVICORN_APP), gunicorn from
// GUNICORN_CMD_ARGS, set by a command's prefix or an outer script's export: srv/main.py stayed
// writable though the host's server imported it. Red with mutant workspace-follow-app-env.
func TestCommitAppServerEnv(t *testing.T) {
	run := "#!/bin/sh\ncd \"$(dirname \"$0\")/..\"\nexport UVICORN_APP_DIR=srv\nexec uvicorn main:app --port 8000\n"
	runInlineCases(t, []inlineCase{
		{"prefix UVICORN_APP_DIR", appHook(`UVICORN_APP_DIR=srv uvicorn main:app`), "srv/main.py", false},
		{"prefix UVICORN_APP", appHook(`UVICORN_APP=srv.main:app uvicorn --port 8000`), "srv/main.py", false},
		{"prefix GUNICORN_CMD_ARGS quoted", appHook(`GUNICORN_CMD_ARGS="--bind 127.0.0.1:8000 --chdir srv" gunicorn main:app`), "srv/main.py", false},
		{"script export UVICORN_APP_DIR", appHook(`scripts/run.sh`, "scripts/run.sh", run), "srv/main.py", false},
		// ordinary: what the server does not import stays the call's
		{"prefix UVICORN_APP_DIR: app", appHook(`UVICORN_APP_DIR=srv uvicorn main:app`), "app/main.py", true},
		{"prefix UVICORN_APP: docs", appHook(`UVICORN_APP=srv.main:app uvicorn --port 8000`), "docs/a.md", true},
		{"script export: docs", appHook(`scripts/run.sh`, "scripts/run.sh", run), "docs/a.md", true},
	})
}

// gunicorn reads a config file (-c/--config, else gunicorn.conf.py in its working directory)
// whose wsgi_app, chdir and pythonpath place what it imports (atk45a F8): read from the command
// line only, `gunicorn` with ./gunicorn.conf.py's wsgi_app = 'srv.main:app' or `gunicorn -c
// conf/g.py` (chdir = 'srv') left srv/main.py writable, and a call could make gunicorn.conf.py.
// Red with mutant workspace-follow-app-config; a root config is not the root's package (mutant
// workspace-follow-app-config-root refuses docs/a.md).
func TestCommitAppServerConfig(t *testing.T) {
	root := appHook(`gunicorn --bind 127.0.0.1:8000`, "gunicorn.conf.py", "import multiprocessing\nwsgi_app = 'srv.main:app'\nworkers = multiprocessing.cpu_count()\n")
	sub := appHook(`gunicorn -c conf/g.py`, "conf/g.py", "chdir = 'srv'\nwsgi_app = \"main:app\"  # the app\n")
	pp := appHook(`gunicorn --config=conf/g.py main:app`, "conf/g.py", "pythonpath: str = 'srv'\n")
	env := appHook(`gunicorn -c conf/g.py`, "conf/g.py", "import os\nwsgi_app = os.environ.get('APP', 'main:app')\n", "conf/other.py", "X = 1\n")
	rootEnv := appHook(`gunicorn`, "gunicorn.conf.py", "import os\nchdir = os.environ['APP_DIR']\nwsgi_app = 'main:app'\n")
	runInlineCases(t, []inlineCase{
		{"gunicorn.conf.py wsgi_app", root, "srv/main.py", false},
		{"-c conf/g.py chdir", sub, "srv/main.py", false},
		{"--config=conf/g.py pythonpath", pp, "srv/main.py", false},
		{"the call makes gunicorn.conf.py", appHook(`gunicorn app.main:app`), "gunicorn.conf.py", false},
		{"-c conf/g.py: the config", sub, "conf/g.py", false},
		{"wsgi_app not a literal: the config's directory", env, "conf/other.py", false},
		{"chdir not a literal at the root", rootEnv, "srv/main.py", false},
		// ordinary: the rest of the project stays the call's
		{"gunicorn.conf.py: docs", root, "docs/a.md", true},
		{"gunicorn.conf.py: app", root, "app/main.py", true},
		{"-c conf/g.py: app", sub, "app/main.py", true},
		{"no config: docs", appHook(`gunicorn app.main:app`), "docs/a.md", true},
	})
}

// Django imports the modules its settings name as strings (atk45a F8): DJANGO_SETTINGS_MODULE
// (a wsgi.py's setdefault, a command's prefix), INSTALLED_APPS' apps (their packages), ROOT_URLCONF,
// a urls.py's include('…'): web/polls/views.py stayed writable under `gunicorn mysite.wsgi`. Red
// with mutant workspace-follow-django-settings.
func TestCommitDjangoSettings(t *testing.T) {
	resolutionAlone(t) // the precise resolution: a package whole would cover polls/ by its place
	dj := map[string]string{
		"web/manage.py":          "import os, sys\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'mysite.settings')\n",
		"web/mysite/__init__.py": "",
		"web/mysite/wsgi.py":     "import os\nfrom django.core.wsgi import get_wsgi_application\nos.environ.setdefault(\"DJANGO_SETTINGS_MODULE\", \"mysite.settings\")\napplication = get_wsgi_application()\n",
		"web/mysite/settings.py": "from pathlib import Path\nBASE_DIR = Path(__file__).resolve().parent.parent\nINSTALLED_APPS = [\n    'django.contrib.admin',\n    'polls.apps.PollsConfig',\n]\n" +
			"ROOT_URLCONF = 'mysite.urls'\nDATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': BASE_DIR / 'db.sqlite3'}}\n",
		"web/mysite/urls.py":    "from django.urls import include, path\nurlpatterns = [path('blog/', include('blog.urls'))]\n",
		"web/polls/__init__.py": "", "web/polls/apps.py": "X = 1\n", "web/polls/views.py": "X = 1\n",
		"web/blog/__init__.py": "", "web/blog/urls.py": "X = 1\n", "web/blog/views.py": "X = 1\n",
		"web/db.sqlite3": "x", "web/notes/a.md": "a\n",
	}
	with := func(cmd string) map[string]string {
		// started by a script: a hook's `cd web` protects web/ whole (a directory a config names)
		m := appHook(`scripts/serve.sh`, "scripts/serve.sh", "#!/bin/sh\ncd \"$(dirname \"$0\")/../web\"\nexec "+cmd+"\n")
		for k, v := range dj {
			m[k] = v
		}
		return m
	}
	g := with(`gunicorn mysite.wsgi --bind 127.0.0.1:8000`)
	env := with(`DJANGO_SETTINGS_MODULE=mysite.settings gunicorn other.wsgi:application`)
	mg := with(`python3 manage.py runserver`)
	mg["web/manage.py"] = "import os\nos.environ[\"DJANGO_SETTINGS_MODULE\"] = \"mysite.settings\"\n"
	split := with(`gunicorn mysite.wsgi`)
	split["web/mysite/settings.py"] = "LOCAL_APPS = [\"polls\"]\nINSTALLED_APPS = [\"django.contrib.admin\"] + LOCAL_APPS\n"
	runInlineCases(t, []inlineCase{
		{"INSTALLED_APPS polls", g, "web/polls/views.py", false},
		{"LOCAL_APPS polls", split, "web/polls/views.py", false},
		{"manage.py's os.environ[…] =: polls", mg, "web/polls/views.py", false},
		{"ROOT_URLCONF's include('blog.urls')", g, "web/blog/views.py", false},
		{"settings module", g, "web/mysite/settings.py", false},
		{"DJANGO_SETTINGS_MODULE prefix: polls", env, "web/polls/views.py", false},
		// ordinary: the database, notes, the rest of the project
		{"db.sqlite3", g, "web/db.sqlite3", true},
		{"notes", g, "web/notes/a.md", true},
		{"docs", g, "docs/a.md", true},
	})
}
