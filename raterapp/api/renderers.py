"""DRF's browsable API under the app's Content-Security-Policy.

Its templates carry a few ``style`` attributes (button and form layout), which the policy
refuses everywhere else; its pages allow style attributes (``style-src-attr``), and nothing
more: no inline script (DRF passes its data in a JSON block), no inline style element (the
Pygments colours of code in descriptions are left out).
"""

from __future__ import annotations

from rest_framework import renderers

STYLE_ATTRIBUTES = {"style-src-attr": ["'unsafe-inline'"]}


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None:
            response._csp_update = STYLE_ATTRIBUTES  # read by csp.middleware.CSPMiddleware
        return super().render(data, accepted_media_type, renderer_context)

    def get_context(self, *args, **kwargs):
        context = super().get_context(*args, **kwargs)
        context["code_style"] = None  # Pygments' CSS, in an inline style element, for code in descriptions
        return context
