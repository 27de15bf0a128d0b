"""Sessions in signed cookies, with a row on the server for every login, so logging out ends it.

An annotator's session holds only which annotator they are, and stays a signed cookie: no
database read or write per page, which a crowd launch would multiply. A signed cookie alone
cannot be revoked, though: a copy of an organiser's cookie would open the admin after they
logged out. So a session that holds a login also names a row of django_session (random key,
expiry); the session counts only while that row exists. Logging out (flush) and logging in
(cycle_key) delete the row, and a cookie replayed after that opens nothing. The cost is one
indexed read per request of a logged-in user, and none for annotators.

SESSION_ENGINE = "evalsite.sessions". `manage.py clearsessions` deletes expired rows. Sync only
(the site runs on WSGI): the async methods of the signed-cookie store would skip the row.
"""

from django.contrib.auth import SESSION_KEY as USER_KEY
from django.contrib.sessions.backends import signed_cookies
from django.contrib.sessions.backends.base import VALID_KEY_CHARS
from django.contrib.sessions.models import Session
from django.utils import timezone
from django.utils.crypto import get_random_string

LIVE_KEY = "_live"  # in the session: the key of the row that keeps its login valid


class SessionStore(signed_cookies.SessionStore):
    def load(self) -> dict:
        data = super().load()
        if USER_KEY in data and not self._is_live(data.get(LIVE_KEY)):
            # A login whose row is gone: logged out, or expired. The session is empty, and
            # the response deletes the stale cookie.
            self._session_key = None
            return {}
        return data

    def save(self, must_create: bool = False) -> None:
        if USER_KEY in self:
            expires = self.get_expiry_date()
            if LIVE_KEY in self:
                Session.objects.filter(session_key=self[LIVE_KEY]).update(expire_date=expires)
            else:
                self[LIVE_KEY] = get_random_string(32, VALID_KEY_CHARS)
                Session.objects.create(
                    session_key=self[LIVE_KEY],
                    session_data=str(self[USER_KEY]),
                    expire_date=expires,
                )
        super().save(must_create)

    def flush(self) -> None:
        """Logout: the row goes, so every copy of this cookie stops counting."""
        self._end_login()
        super().flush()

    def cycle_key(self) -> None:
        """Login: a session from before it does not carry the new login's row."""
        self._end_login()
        super().cycle_key()

    def _end_login(self) -> None:
        key = self.pop(LIVE_KEY, None)
        if key:
            Session.objects.filter(session_key=key).delete()

    @staticmethod
    def _is_live(key: str | None) -> bool:
        if not key:
            return False
        return Session.objects.filter(session_key=key, expire_date__gt=timezone.now()).exists()

    @classmethod
    def clear_expired(cls) -> None:
        Session.objects.filter(expire_date__lt=timezone.now()).delete()
