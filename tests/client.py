"""A test client whose requests arrive over HTTPS, as a browser's do in production.

The suite runs with production's defaults, which redirect plain HTTP to HTTPS
(SECURE_SSL_REDIRECT): Django's client asks over HTTP unless each call says `secure=True`.
"""

from django.test import Client


class HttpsClient(Client):
    def request(self, **request):
        request.update({"wsgi.url_scheme": "https", "SERVER_PORT": "443"})
        return super().request(**request)
