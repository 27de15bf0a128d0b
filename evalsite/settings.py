"""Settings for the evaluation platform.

Every value comes from the environment, and the defaults are production's: DEBUG off, a
SECRET_KEY required, HTTPS-only cookies, HSTS and a redirect to HTTPS. Development says so
explicitly (`DEBUG=true`, as bin/serve does); a plain-HTTP trial says `SECURE_HTTPS=false`.
Storage defaults run on one machine with nothing installed: SQLite, and Celery on a broker
kept in files under var/. `DATABASE_URL` (postgres://...) and `CELERY_BROKER_URL`
(redis://...) switch to the production services.
"""

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    # Unset or empty (compose's ${X:-}) is the default; a typo is an error, never "false".
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value not in _TRUE + _FALSE:
        raise ImproperlyConfigured(f"{name}={value!r}: use true or false")
    return value in _TRUE


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated variable as a list, without blanks."""
    return [part.strip() for part in env_str(name, default).split(",") if part.strip()]


# The longest window of a rate limit: a file cache keeps each counter this long.
RATE_WINDOW_MAX_SECONDS = 24 * 3600


def env_rate(name: str, default: str) -> tuple[int, int] | None:
    """A rate limit, "REQUESTS/SECONDS" (e.g. 120/60), or None for "off"; anything else is
    an error, never no limit."""
    value = env_str(name, "").strip().lower() or default
    if value == "off":
        return None
    count, _, seconds = value.partition("/")
    if not (count.isdigit() and seconds.isdigit() and int(count) > 0):
        raise ImproperlyConfigured(f"{name}={value!r}: use REQUESTS/SECONDS, e.g. 120/60, or off")
    if not 0 < int(seconds) <= RATE_WINDOW_MAX_SECONDS:
        raise ImproperlyConfigured(f"{name}={value!r}: a window of 1 to 86400 seconds")
    return int(count), int(seconds)


def cache_from_url(url: str, var_dir: Path) -> dict:
    """A CACHES entry from redis://... or file:///path (a folder that every process of one
    machine shares); the rate limits' counters live there (annotation/rate_limits.py)."""
    parts = urlsplit(url)
    if parts.scheme in ("redis", "rediss"):
        # A Redis that does not answer delays a request by a second at most: the limits then
        # let it through (rate_limits.py), as they do when Redis is down.
        options = {"socket_connect_timeout": 1, "socket_timeout": 1}
        backend = "django.core.cache.backends.redis.RedisCache"
        return {"BACKEND": backend, "LOCATION": url, "KEY_PREFIX": "evalsite", "OPTIONS": options}
    if parts.scheme == "file":
        # Its incr rewrites a counter with the default TIMEOUT: as long as the longest window,
        # so a counter outlives its window (each window has a key of its own). Old windows'
        # files go when the cache culls a third of its files at MAX_ENTRIES.
        return {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": unquote(parts.path) or str(var_dir / "cache"),
            "TIMEOUT": RATE_WINDOW_MAX_SECONDS,
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    raise ImproperlyConfigured(f"CACHE_URL={url!r}: use redis://... or file:///path")


def database_from_url(url: str) -> dict:
    """A DATABASES entry from postgres://user:password@host:port/name or sqlite:///path."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": parts.path[1:] or ":memory:"}
    if parts.scheme not in ("postgres", "postgresql"):
        raise ValueError(f"DATABASE_URL: unsupported scheme {parts.scheme!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path[1:]),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": env_int("DB_CONN_MAX_AGE", 60),
        # A kept connection that the server or a failover dropped is replaced, not used.
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": prepared_statements(env_bool("DB_PREPARED_STATEMENTS", True)),
    }


def prepared_statements(enabled: bool) -> dict:
    """Values sent apart from the statement, and a statement run five times on a
    connection kept prepared: PostgreSQL then parses and plans the hot statements of the HIT
    pages once per connection, not on every request (half its CPU per statement, measured).
    Off (DB_PREPARED_STATEMENTS=false) behind a pooler that cannot keep prepared statements
    across transactions, such as PgBouncer in transaction mode before 1.21."""
    return {"server_side_binding": True, "prepare_threshold": 5} if enabled else {}


def proxy_ssl_header(value: str) -> tuple[str, str] | None:
    """Django's (header, value) from "HTTP_X_FORWARDED_PROTO,https"; the value defaults to https."""
    if not value.strip():
        return None
    name, _, expected = (part.strip() for part in value.partition(","))
    if not name.startswith("HTTP_"):
        raise ImproperlyConfigured(
            f"SECURE_PROXY_SSL_HEADER={value!r}: name the header as Django sees it, "
            "e.g. HTTP_X_FORWARDED_PROTO,https"
        )
    return name, expected or "https"


DEBUG = env_bool("DEBUG", False)

# Development keys written in this repository (settings, bin/serve): public, so refused
# without DEBUG.
DEVELOPMENT_SECRET_KEYS = (
    "dev-only-insecure-key-set-SECRET_KEY-in-production",
    "django-insecure-development-only",
)
# Django's own measure of a guessable key (check --deploy's security.W009), made an error:
# the key signs the sessions, so a weak one lets anyone forge an organiser's login.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_DISTINCT = 5


def secret_key_problem(key: str) -> str:
    """Why `key` cannot sign production's sessions, or "" when it can."""
    # startproject's keys start with django-insecure-: made for development, maybe public.
    if not key or key in DEVELOPMENT_SECRET_KEYS or key.startswith("django-insecure-"):
        return "is not set (or is a public development key)"
    if len(key) < SECRET_KEY_MIN_LENGTH or len(set(key)) < SECRET_KEY_MIN_DISTINCT:
        return (
            f"is weak ({len(key)} characters, {len(set(key))} distinct: at least "
            f"{SECRET_KEY_MIN_LENGTH} and {SECRET_KEY_MIN_DISTINCT} are needed)"
        )
    return ""


SECRET_KEY = env_str("SECRET_KEY") or (DEVELOPMENT_SECRET_KEYS[1] if DEBUG else "")
if not DEBUG and (_problem := secret_key_problem(SECRET_KEY)):
    raise ImproperlyConfigured(
        f"SECRET_KEY {_problem}. Set SECRET_KEY to a long random value, e.g. the output of "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))', "
        "or set DEBUG=true on a development machine."
    )

# Loopback only unless told: a request naming any other host is refused (400).
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
# Full origins (https://eval.example.org) of pages that post here through another host name,
# e.g. behind a proxy that rewrites Host.
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# The site's public address (https://eval.example.org), only for links written where no
# request names the host: manage.py invite_annotators and the admin's Prolific study URL.
# Pages build their links from the request's own host (behind a proxy that rewrites Host,
# set USE_X_FORWARDED_HOST=true).
SITE_URL = env_str("SITE_URL").rstrip("/")
USE_X_FORWARDED_HOST = env_bool("USE_X_FORWARDED_HOST", False)

# HTTPS. SECURE_HTTPS drives the secure defaults of the settings below: on unless DEBUG, so
# production needs nothing; a plain-HTTP trial on loopback says SECURE_HTTPS=false. Each
# setting can still be set on its own.
SECURE_HTTPS = env_bool("SECURE_HTTPS", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", SECURE_HTTPS)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", SECURE_HTTPS)
# Sessions live in a signed cookie: an annotator's session holds only which annotator they
# are, so every page saves a database read and a write that a crowd launch would multiply.
# A login also keeps a row on the server, which logging out deletes (evalsite/sessions.py).
SESSION_ENGINE = "evalsite.sessions"
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", SECURE_HTTPS)
# Sent only on HTTPS responses. A site that shares its domain with plain-HTTP subdomains sets
# SECURE_HSTS_INCLUDE_SUBDOMAINS=false; preload matters only once the domain is submitted
# to the browsers' preload list.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600 if SECURE_HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", SECURE_HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", SECURE_HTTPS)
# Behind a TLS-terminating proxy: the header it sets, e.g. HTTP_X_FORWARDED_PROTO,https. Only
# where the proxy always sets or strips it, or a client could claim HTTPS.
SECURE_PROXY_SSL_HEADER = proxy_ssl_header(env_str("SECURE_PROXY_SSL_HEADER"))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "annotation",
    "ranking",
    "ranking.agreement",
    "ranking.automatic_metrics",
    "generation",
    "judges",
    # The token API (api/v1/) and webhooks; ninja for its schema page's own static files.
    "api",
    "ninja",
    # Project-level commands that assemble the apps (the demo).
    "evalsite",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from the web process itself: no other server is needed in production.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before any view or the CSRF check reads a body, and after the user is known.
    "evalsite.middleware.RequestSizeLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "evalsite.urls"
# Its error handlers (evalsite/errors.py) give the admin its own error pages; so does this.
CSRF_FAILURE_VIEW = "evalsite.errors.csrf_failure"
WSGI_APPLICATION = "evalsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"))
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The web server and the worker write to one file; wait for the lock instead of failing.
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    # A file, not memory, so a Celery worker started by the tests sees the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Compressed (gzip) copies made by collectstatic, served by WhiteNoise. Not the manifest
    # storage: its hashed names need collectstatic to have run, or every page that links
    # a static file fails, which would make the suite (DEBUG off) depend on a build step.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
LOGIN_URL = "admin:login"

# Form data is held in memory, up to this; an uploaded file larger than the second goes to a
# temporary file, which the importers read as a stream (IMPORT_MAX_BYTES caps the file).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)
IMPORT_MAX_BYTES = env_int("IMPORT_MAX_BYTES", 200 * 1024 * 1024)
# Whole request bodies, by their Content-Length, refused (413) before they are read
# (evalsite/middleware.py): any request up to the first; an upload view, for a user who may
# change campaigns, up to the second (the file and the form around it). The web server in
# front should refuse bodies over UPLOAD_MAX_BYTES itself (nginx: client_max_body_size).
REQUEST_MAX_BYTES = env_int("REQUEST_MAX_BYTES", DATA_UPLOAD_MAX_MEMORY_SIZE)
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", IMPORT_MAX_BYTES + 1024 * 1024)
# The admin's uploads wait here for the worker that imports them (annotation/uploads.py):
# web and worker processes must share it.
UPLOAD_DIR = Path(os.environ.get("UPLOAD_DIR", VAR_DIR / "uploads"))
# The admin's "Load a published dataset" (annotation/published_uploads.py). An uploaded
# .zip of a dataset's folder is at most IMPORT_MAX_BYTES and unpacks to at most these
# (counted as unpacked, whatever the archive declares). A folder on the server may be named
# instead only if it is under PUBLISHED_DATA_DIR: unset, the admin offers no folder.
PUBLISHED_UNPACKED_MAX_BYTES = env_int("PUBLISHED_UNPACKED_MAX_BYTES", 1024 * 1024 * 1024)
PUBLISHED_UNPACKED_MAX_FILES = env_int("PUBLISHED_UNPACKED_MAX_FILES", 20_000)
PUBLISHED_DATA_DIR = env_str("PUBLISHED_DATA_DIR", "")
MAX_OUTPUT_CHARS = env_int("MAX_OUTPUT_CHARS", 5000)
MAX_INPUT_CHARS = env_int("MAX_INPUT_CHARS", 100_000)

# Hosted systems read API keys from environment variables named in their settings, which
# organisers write: only from these, never from the platform's own (DATABASE_URL, ...).
HOSTED_SECRET_ENV_PREFIX = env_str("HOSTED_SECRET_ENV_PREFIX", "EVAL_SECRET_")
HOSTED_SECRET_ENV_ALLOWED = env_list("HOSTED_SECRET_ENV_ALLOWED")
# Their endpoints (base_url) may reach only public addresses: never loopback, private,
# link-local (the cloud's metadata service) or reserved ones, unless the host is named here
# as written in the URL (a lab's model server, e.g. "gpu-box.lab,127.0.0.1").
HOSTED_ENDPOINT_ALLOWED_HOSTS = env_list("HOSTED_ENDPOINT_ALLOWED_HOSTS")
# Outbound webhooks (api/webhooks.py) go to public addresses only, unless this is set (a
# receiver inside the deployment's network, or a test's on loopback).
WEBHOOK_ALLOW_PRIVATE = env_bool("WEBHOOK_ALLOW_PRIVATE", False)
# A delivery's whole time (connecting, sending, the answer read): a receiver that answers
# one byte at a time is cut off then. Deliveries run on the "outbound" queue's workers.
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10)
# A delivery is tried this many times, waiting WEBHOOK_RETRY_SECONDS, then twice as long
# after each failure (at most a day), before it is given up as failed.
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 8)
WEBHOOK_RETRY_SECONDS = env_int("WEBHOOK_RETRY_SECONDS", 30)
# API tokens end this many days after they are made (a rotation makes a new one for as long);
# `api_token --days` may choose fewer (api/tokens.py).
API_TOKEN_DAYS = env_int("API_TOKEN_DAYS", 90)
# Rate limits (annotation/rate_limits.py), "REQUESTS/SECONDS" or "off": a request beyond one
# is answered 429 with Retry-After. The API's per token; the admin login's per account and
# per address (every attempt counts); the annotators' entry link (with a worker's or an
# invitation's parameters) per address. Counted in CACHES["default"], which every web
# process must share: the broker's Redis where there is one (or CACHE_URL), else files
# under VAR_DIR, shared by the processes of one machine.
RATE_LIMIT_API = env_rate("RATE_LIMIT_API", "600/60")
RATE_LIMIT_LOGIN_ACCOUNT = env_rate("RATE_LIMIT_LOGIN_ACCOUNT", "10/900")
RATE_LIMIT_LOGIN_ADDRESS = env_rate("RATE_LIMIT_LOGIN_ADDRESS", "30/900")
RATE_LIMIT_ENTRY = env_rate("RATE_LIMIT_ENTRY", "120/60")
# Where a client's address is read from: REMOTE_ADDR unless named here. Behind a proxy every
# request comes from the proxy's address, so name the header it appends the client's to
# (HTTP_X_FORWARDED_FOR): its last address is the one the proxy saw, which no client writes.
RATE_LIMIT_CLIENT_HEADER = env_str("RATE_LIMIT_CLIENT_HEADER").strip() or "REMOTE_ADDR"
if RATE_LIMIT_CLIENT_HEADER != "REMOTE_ADDR" and not RATE_LIMIT_CLIENT_HEADER.startswith("HTTP_"):
    raise ImproperlyConfigured(
        f"RATE_LIMIT_CLIENT_HEADER={RATE_LIMIT_CLIENT_HEADER!r}: name the header as Django sees"
        " it, e.g. HTTP_X_FORWARDED_FOR"
    )
# The tests give each test a namespace of its own, so one test's requests, all from
# 127.0.0.1, never use up another's limits.
RATE_LIMIT_NAMESPACE = ""

# Prolific's API (annotation/prolific.py); tests point it at a fake on loopback.
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
# Each request to it, in all (connecting, sending, the answer read), and the largest answer
# read (a page of a study's submissions is tens of kB).
PROLIFIC_TIMEOUT_SECONDS = env_int("PROLIFIC_TIMEOUT_SECONDS", 30)
PROLIFIC_MAX_BYTES = env_int("PROLIFIC_MAX_BYTES", 8 * 1024 * 1024)
# How often the periodic sweep asks Prolific, per campaign with annotators awaiting its
# confirmation, which participants are in the study: their work counts from then on.
PROLIFIC_POLL_SECONDS = env_int("PROLIFIC_POLL_SECONDS", 60)

# Celery. Without CELERY_BROKER_URL the broker is a folder of files, so one machine runs a
# real worker process with nothing else installed.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", "") or None
if CELERY_BROKER_URL == "filesystem://":
    _queue_dir = VAR_DIR / "celery-queue"
    _queue_dir.mkdir(parents=True, exist_ok=True)
    # The exchange tables too, or kombu writes them to control/ in the working directory.
    _control_dir = VAR_DIR / "celery-control"
    _control_dir.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(VAR_DIR / "celery-processed"),
        "store_processed": False,
        "control_folder": str(_control_dir),
    }
_default_cache = (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "file://"
)
CACHES = {"default": cache_from_url(env_str("CACHE_URL") or _default_cache, VAR_DIR)}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# A task is acknowledged when it ends, and given back to the queue if its worker process
# dies, so a killed worker's job is redelivered; the job's claim makes a second delivery
# harmless (jobs/claims.py).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# Queues by what holds a worker, so a ranking (seconds) never waits behind other work:
# "default" for rankings and the sweeps, "long" for metric runs (minutes of BLEU, METEOR's
# JVM) and imports, "generation" for models (GPU workers), "outbound" for requests to
# servers outside (webhooks, Prolific's API), which answer when they like. A worker serves
# the queues its -Q names; `manage.py workers` runs one worker per queue on one machine
# (evalsite/celery.py).
CELERY_TASK_ROUTES = {
    "ranking.compute_metrics": {"queue": "long"},
    # An upload of up to UPLOAD_MAX_BYTES is imported in one transaction: seconds to minutes.
    "annotation.import_upload": {"queue": "long"},
    "annotation.load_published": {"queue": "long"},
    "generation.generate_outputs": {"queue": "generation"},
    "judges.judge_outputs": {"queue": "generation"},
    "api.deliver_webhook": {"queue": "outbound"},
    "annotation.poll_prolific": {"queue": "outbound"},
}
# Keep trying to reach the broker, at start-up too, instead of exiting: a worker outlives a
# broker restart.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # A message taken by a worker that vanished (kill -9 of the whole worker) goes back
        # to the queue after this long. Jobs are usually recovered sooner by the sweep, and
        # a long job redelivered while still running finds its claim held and returns.
        "visibility_timeout": env_int("BROKER_VISIBILITY_TIMEOUT", 600),
        # Notice a dead connection within seconds rather than hanging on it.
        "socket_timeout": 10,
        "socket_connect_timeout": 5,
        "health_check_interval": 10,
    }
# No task is ever sent with a countdown or ETA: kombu 5.7's Redis transport crashes the
# worker (AttributeError on 'hostname') when the connection drops while it holds one, and
# a held message would be the only record of the work. Delays live in the database
# (RANKING_DEBOUNCE_SECONDS) and the periodic sweep below acts on them.
JOB_SWEEP_SECONDS = env_int("JOB_SWEEP_SECONDS", 10)
CELERY_BEAT_SCHEDULE = {
    name: {
        "task": name,
        "schedule": float(JOB_SWEEP_SECONDS),
        # A sweep that waited out a broker outage is worthless once the next one is due.
        "options": {"expires": float(JOB_SWEEP_SECONDS)},
    }
    for name in (
        "annotation.sweep",
        "annotation.poll_prolific",
        "ranking.sweep",
        "generation.sweep",
        "judges.sweep",
        "api.sweep",
    )
}
# Beat keeps its schedule in a file under var/. With the Redis broker nothing else creates
# that folder, and a beat that cannot open its file dies while its worker carries on, ready
# but never sweeping: no ranking is ever queued.
VAR_DIR.mkdir(parents=True, exist_ok=True)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# A worker writes its job's heartbeat this often; a job not heard of for JOB_STALE_SECONDS
# is taken over. A queued or abandoned job is sent again after JOB_RESEND_SECONDS without
# a worker. A job taken JOB_MAX_ATTEMPTS times (its workers keep dying) fails.
JOB_HEARTBEAT_SECONDS = env_int("JOB_HEARTBEAT_SECONDS", 10)
JOB_STALE_SECONDS = env_int("JOB_STALE_SECONDS", 60)
JOB_RESEND_SECONDS = env_int("JOB_RESEND_SECONDS", 60)
JOB_MAX_ATTEMPTS = env_int("JOB_MAX_ATTEMPTS", 5)

# After a change to a criterion's judgments, automatic rankings are queued at most once per
# this many seconds, so a burst of submissions causes one recomputation, not one per HIT.
RANKING_DEBOUNCE_SECONDS = env_int("RANKING_DEBOUNCE_SECONDS", 60)
# Threads a ranking worker's TrueSkill runs use (its runs are independent and seeded one by
# one, so the results are the same for any number; 1 runs them one after the other).
RANKING_PROCESSES = max(1, env_int("RANKING_PROCESSES", os.cpu_count() or 1))
# Where those runs go: "auto" to a CUDA GPU when numba finds one (the same draws, ratings
# within about 1e-12 of the CPU's; back to the CPU, logged, if the GPU fails), "off" to the
# CPU. Off by default: the GPU path has run under numba's simulator, not yet on a device.
RANKING_GPU = env_str("RANKING_GPU").strip().lower() or "off"
if RANKING_GPU not in ("auto", "off"):
    raise ImproperlyConfigured(f"RANKING_GPU={RANKING_GPU!r}: use auto or off")
# The function that gives the ranking's fused view a criterion's fused judge and its scores
# (ranking/judge_scores.py): ranking may not import judges, so it is named here.
RANKING_JUDGE_SCORES = "judges.fusion.scores_for_criterion"
# A published procedure's run measures how often it orders identical systems on the
# campaign's own design (ranking/permutation_check.py): at most this many permutations of
# the labels within items, and no more after this many seconds (at least one is done).
# E2E's TrueSkill protocol takes about a second a permutation at E2E's size on two cores:
# 15 s gives some 15 permutations there (an interval of about +-15 points) and keeps every
# view fresh within a minute of a HIT (benchmarks/bench_ranking_scale.py; with 30 s, E2E's
# tab took 80 s).
RANKING_NULL_CHECK_PERMUTATIONS = env_int("RANKING_NULL_CHECK_PERMUTATIONS", 100)
RANKING_NULL_CHECK_SECONDS = env_int("RANKING_NULL_CHECK_SECONDS", 15)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
