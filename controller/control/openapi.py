"""The OpenAPI 3.1 description of the control interface (``GET /openapi.json``), written by hand from
docs/control.md: one place a client generator or a reviewer reads the endpoints, their parameters, bodies and
answers."""

from __future__ import annotations

from typing import Any

from controller.control.checks import MAX_BODY, MAX_REASON, MAX_SEQ
from controller.control.recall import RECALL_STATUSES
from controller.settings.control import MIN_RECALL
from controller.game.sessions import PLAYER_ID
from controller.round.inputs import ACTION_CODES, ACTIONS, ANSWERING, RATING_ACTIONS, ROLES
from drivers.events import SEATS

_ERROR = {"description": "refused; the body says why",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_JSON_OBJECT = {"type": "object"}
#: A request body (``controller.control.checks.content_type_of``, ``body_text``): JSON Schema says nothing of bytes.
_BODY = (f"JSON in UTF-8 without a byte order mark (RFC 8259, 8.1; another encoding or charset: 415), at most "
         f"{MAX_BODY} bytes, with Content-Length")
#: An integer of the body (``controller.control.checks.whole_number``): JSON Schema counts 3.0 an integer (2020-12,
#: "integer"), the interface does not.
_INTEGER = "an integer written as one: 3, not 3.0 or 3e0 (400)"
#: Names in words by their name in code (``GET /labels``).
_WORDS = {"type": "object", "additionalProperties": {"type": "string"}}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document as a JSON-ready dict (OpenAPI Specification 3.1.0)."""
    from controller.round.graph import STATES  # here: controller.game.table imports the control interface, round it

    return {
        "openapi": "3.1.0",
        "info": {"title": "Criss-Cross Poker table controller: control interface", "version": "1",
                 "description": "Loopback only. Records and views never carry a face-down card (docs/control.md)."},
        "components": {
            "securitySchemes": {"operator": {"type": "http", "scheme": "basic"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
                # an item of the view's ``actions`` (controller.round.actions.action_entry): allowed now (reason
                # null), or the step the round waits for and why not yet
                "ViewAction": {"type": "object", "required": ["action", "label", "role", "reason"],
                               "properties": {"action": {"enum": list(ACTIONS)}, "label": {"type": "string"},
                                              "role": {"enum": list(ROLES)},
                                              "reason": {"type": ["string", "null"]}}},
                "Labels": {"type": "object", "required": ["actions", "states", "spots", "hands", "codes",
                                                          "currency", "heartbeat_s"],
                           "properties": {
                               "actions": {"type": "object", "additionalProperties": {
                                   "type": "object", "required": ["label", "role"],
                                   "properties": {"label": {"type": "string"}, "role": {"enum": list(ROLES)}}}},
                               "states": _WORDS, "spots": _WORDS, "hands": _WORDS,
                               "codes": {"type": "object", "additionalProperties": {
                                   "type": "array", "items": {"type": "string"}}},
                               "currency": {"type": "object", "required": ["code", "symbol", "minor_units"],
                                            "properties": {"code": {"type": "string"}, "symbol": {"type": "string"},
                                                           "minor_units": {"type": "integer"}}},
                               # seconds between an idle event stream's heartbeat frames
                               "heartbeat_s": {"type": "number", "exclusiveMinimum": 0}}},
                "Record": {"type": "object", "required": ["seq", "type", "data"],
                           "properties": {"seq": {"type": "integer"}, "time": {"type": "string"},
                                          "kind": {"enum": ["event", "command", "record"]},
                                          "round": {"type": ["integer", "null"]}, "type": {"type": "string"},
                                          "data": _JSON_OBJECT}},
                "RecallList": {"type": "object", "required": ["last", "rounds"], "properties": {
                    "last": {"type": "integer", "minimum": MIN_RECALL},
                    "rounds": {"type": "array", "items": {
                        "type": "object", "required": ["round", "status", "opened", "test", "manual", "faults",
                                                       "mispays"],
                        "properties": {"round": {"type": "integer"}, "status": {"enum": list(RECALL_STATUSES)},
                                       "opened": {"type": "string"}, "test": {"type": "boolean"},
                                       "manual": {"type": "boolean"}, "faults": {"type": "integer", "minimum": 0},
                                       "mispays": {"type": "integer", "minimum": 0}}}}}},
                "RecallRound": {"type": "object", "required": ["round", "status", "last", "filtered", "test", "manual",
                                                               "steps"], "properties": {
                    "round": {"type": "integer"}, "status": {"enum": list(RECALL_STATUSES)},
                    "last": {"type": "integer", "minimum": MIN_RECALL}, "filtered": {"type": "boolean"},
                    "test": {"type": "boolean"}, "manual": {"type": "boolean"},
                    "steps": {"type": "array", "items": {
                        "type": "object", "required": ["seq", "time", "type", "text", "data"],
                        "properties": {"seq": {"type": "integer"}, "time": {"type": "string"},
                                       "type": {"type": "string"}, "text": {"type": "string"},
                                       "data": _JSON_OBJECT}}}}},
                "Action": {"type": "object", "required": ["action"], "additionalProperties": False,
                           # void_round and disable_table need a code of their own, an answering action what it
                           # answers, and nothing else does (controller.control.checks.check_action)
                           "allOf": [
                               *({"if": {"properties": {"action": {"const": action}}, "required": ["action"]},
                                  "then": {"required": ["code"], "properties": {"code": {"enum": list(codes)}}}}
                                 for action, codes in ACTION_CODES.items()),
                               {"if": {"properties": {"action": {"enum": [a for a in ACTIONS
                                                                          if a not in ACTION_CODES]}},
                                       "required": ["action"]},
                                "then": {"properties": {"code": {"const": ""}}}},
                               {"if": {"properties": {"action": {"enum": list(ANSWERING)}}, "required": ["action"]},
                                "then": {"required": ["answers"], "properties": {"answers": {"type": "integer"}}},
                                "else": {"properties": {"answers": {"type": "null"}}}}],
                           "properties": {"action": {"enum": list(ACTIONS)},
                                          "code": {"enum": ["", *dict.fromkeys(
                                              code for codes in ACTION_CODES.values() for code in codes)]},
                                          # one line of printable text (str.isprintable); printable ASCII here
                                          "reason": {"type": "string", "maxLength": MAX_REASON,
                                                     "pattern": "^[ -~]*$"},
                                          "round": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_SEQ,
                                                    "description": _INTEGER},
                                          "state": {"enum": [*STATES, None]},
                                          # what clear_fault, acknowledge and accept_mispay answer: /state answers
                                          "answers": {"type": ["integer", "null"], "minimum": 0,
                                                      "maximum": MAX_SEQ, "description": _INTEGER}}},
            },
        },
        "paths": {
            "/state": {"get": {
                "summary": "The round's view as last published (Round.view() and seq)",
                "responses": {"200": {"description": "the view", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["state", "allowed_actions", "actions", "seats"],
                    "properties": {"actions": {"type": "array",
                                               "items": {"$ref": "#/components/schemas/ViewAction"}}}}}}},
                              "503": _ERROR}}},
            "/labels": {"get": {
                "summary": "The words of a screen: each action's label and role, names of states, spots and hands, "
                           "the currency",
                "responses": {"200": {"description": "the words", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Labels"}}}}}}},
            "/events": {"get": {
                "summary": "Public journal records after a cursor (long poll)",
                "parameters": [
                    {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": MAX_SEQ}},
                    # seconds in plain decimal digits (25, 0.5), at most MAX_WAIT (30)
                    {"name": "timeout", "in": "query", "schema": {
                        "type": "string", "maxLength": 24,
                        "pattern": r"^(([0-9]|[12][0-9])(\.[0-9]+)?|30(\.0+)?)$"}}],
                "responses": {"200": {"description": "records, the next cursor, whether some were missed",
                                      "content": {"application/json": {"schema": {
                                          "type": "object", "required": ["records", "next", "missed"],
                                          "properties": {"records": {"type": "array",
                                                                     "items": {"$ref": "#/components/schemas/Record"}},
                                                         "next": {"type": "integer"},
                                                         "missed": {"type": "boolean"}}}}}},
                              "400": _ERROR}}},
            "/events/stream": {"get": {
                "summary": "Server-Sent Events: `record` (id = seq), `view`, `missed`, `dropped`, `heartbeat`",
                "parameters": [
                    {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": MAX_SEQ}},
                    {"name": "Last-Event-ID", "in": "header", "schema": {"type": "integer", "minimum": 0}}],
                "responses": {"200": {"description": "the stream", "content": {"text/event-stream": {}}},
                              "400": _ERROR, "503": _ERROR}}},
            "/actions": {"post": {
                "summary": "Queue a dealer or supervisor action; round and state are the round guard",
                "security": [{"operator": []}],
                "requestBody": {"required": True, "description": _BODY,
                                "content": {"application/json": {
                                    "schema": {"$ref": "#/components/schemas/Action"}}}},
                "responses": {"202": {"description": "queued; the outcome shows in /state and the events",
                                      "content": {"application/json": {"schema": _JSON_OBJECT}}},
                              **{code: _ERROR for code in ("400", "401", "403", "408", "409", "411", "413", "415",
                                                           "429", "503")}}}},
            "/operator": {"get": {
                "summary": "Who the credentials name (user and role); a sign-in check that queues nothing",
                "security": [{"operator": []}],
                "responses": {"200": {"description": "the operator", "content": {"application/json": {"schema": {
                    "type": "object", "properties": {"user": {"type": "string"},
                                                     "role": {"enum": ["dealer", "supervisor"]}}}}}},
                              "401": _ERROR, "429": _ERROR, "503": _ERROR}}},
            "/alerts": {"get": {
                "summary": "The last hole-card alerts, as journaled (supervisors only; never a card)",
                "security": [{"operator": []}],
                "responses": {"200": {"description": "the alerts, oldest first", "content": {"application/json": {
                    "schema": {"type": "object", "properties": {"alerts": {"type": "array", "items": _JSON_OBJECT}}}}}},
                              "401": _ERROR, "403": _ERROR, "429": _ERROR, "503": _ERROR}}},
            "/meters": {"get": {
                "summary": "The lifetime meters (supervisors only; integer minor units; docs/operations.md, Meters)",
                "security": [{"operator": []}],
                "responses": {"200": {"description": "the meters as of the last round's end or the start",
                                      "content": {"application/json": {"schema": {
                                          "type": "object", "required": ["lifetime", "since"],
                                          "properties": {"lifetime": _JSON_OBJECT, "since": _JSON_OBJECT}}}}},
                              "401": _ERROR, "403": _ERROR, "429": _ERROR, "503": _ERROR}}},
            "/sessions": {"get": {
                "summary": "Every seat session's rating (supervisors only; run --rating; docs/rating.md)",
                "security": [{"operator": []}],
                "responses": {"200": {"description": "the open sessions, then the last ended ones; wins the house's in "
                                                     "minor units",
                                      "content": {"application/json": {"schema": {
                                          "type": "object", "required": ["sessions"],
                                          "properties": {"sessions": {"type": "array", "items": _JSON_OBJECT}}}}}},
                              "401": _ERROR, "403": _ERROR, "429": _ERROR, "503": _ERROR}},
                          "post": {
                "summary": "A rating action on a seat: attach a player's id, take it off, end the seat's session "
                           "(dealers and supervisors; docs/rating.md)",
                "security": [{"operator": []}],
                "requestBody": {"required": True, "description": _BODY,
                                "content": {"application/json": {"schema": {"oneOf": [
                                    {"type": "object", "required": ["action", "seat", "player"],
                                     "additionalProperties": False,
                                     "properties": {"action": {"const": "rate_seat"}, "seat": {"enum": list(SEATS)},
                                                    "player": {"type": "string", "pattern": f"^{PLAYER_ID}$"}}},
                                    {"type": "object", "required": ["action", "seat"], "additionalProperties": False,
                                     "properties": {"action": {"enum": [a for a in RATING_ACTIONS if a != "rate_seat"]},
                                                    "seat": {"enum": list(SEATS)}}}]}}}},
                "responses": {"202": {"description": "queued as a SeatRating input, journaled",
                                      "content": {"application/json": {"schema": _JSON_OBJECT}}},
                              **{code: _ERROR for code in ("400", "401", "408", "411", "413", "415", "429", "503")}}}},
            "/recall": {"get": {
                "summary": "Game recall (supervisors only): the last rounds, or one round step by step; a round not "
                           "yet closed only as the secrecy filter lets it out (docs/control.md, Game recall)",
                "security": [{"operator": []}],
                "parameters": [{"name": "round", "in": "query",
                                "schema": {"type": "integer", "minimum": 0, "maximum": MAX_SEQ}}],
                "responses": {"200": {"description": "without round: the last rounds, newest first; with it: that "
                                                     "round's steps in journal order",
                                      "content": {"application/json": {"schema": {"anyOf": [
                                          {"$ref": "#/components/schemas/RecallList"},
                                          {"$ref": "#/components/schemas/RecallRound"}]}}}},
                              **{code: _ERROR for code in ("400", "401", "403", "404", "429", "503")}}}},
            "/openapi.json": {"get": {"summary": "This description",
                                      "responses": {"200": {"description": "OpenAPI 3.1"}}}},
            "/": {"get": {"summary": "The dealer's screen (HTML)",
                          "responses": {"200": {"description": "the page", "content": {"text/html": {}}}}}},
        },
    }
