"""The control interface: the HTTP server of the table's operators and its dealer's screen.

Owns: ``server`` (the server and its threads), ``app`` (the operations), ``openapi``, ``checks`` (what a
request must carry), ``operators`` (who may sign in), ``broadcast`` (the event stream), ``screen/`` (the
dealer's screen). The bounds of every door: ``controller.service.limits``.
May import: ``controller.service`` and below.
"""
