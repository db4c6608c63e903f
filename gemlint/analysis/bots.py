"""Chat bots as serving code: the handlers a bot framework calls for every message, command or interaction.

A Telegram, Discord or Slack bot runs what its handlers do once per message, as a web service runs a route per
request: a model loaded there is loaded per message. A handler is registered

* by a decorator of a bot object: ``@bot.message_handler(...)`` (pyTelegramBotAPI, aiogram 2),
  ``@router.message(...)`` (aiogram 3), ``@bot.command()`` and ``@tree.command()`` (Discord),
  ``@app.on_message(...)`` (Pyrogram), ``@client.on(events.NewMessage)`` (Telethon), ``@app.message(...)``,
  ``@app.command(...)`` (Slack Bolt);
* by ``@client.event`` / ``@bot.listen()`` on a per-message event (``on_message``; ``on_ready`` runs once);
* or by handing it to a handler class or registration: ``CommandHandler("draw", draw)``,
  ``MessageHandler(filters.TEXT, reply)`` (python-telegram-bot), ``bot.register_message_handler(reply)``.

A Socket.IO server (python-socketio, Flask-SocketIO) runs its event handlers the same way, once per message a
client emits: ``@sio.on("frame")``, ``@socketio.on("audio")``, ``@sio.event`` on any event but the connection's
own (``connect``, ``disconnect``), and ``sio.on("frame", handle)`` or ``socketio.on_event("audio", handle)``.

Only in a module that imports one of those frameworks (:data:`~gemlint.analysis.frameworks.BOT_FRAMEWORKS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.syntax import terminal_name

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis

#: Decorators that register a handler for an event the framework names: per message only for such events.
_EVENT_DECORATORS = frozenset({"event", "listen"})
_PER_MESSAGE_EVENTS = ("on_message", "on_interaction", "on_reaction_add", "on_raw_reaction_add", "message", "app_mention")
#: Socket.IO's registrations called with the handler: ``sio.on("frame", handle)``, ``socketio.on_event("audio", handle)``.
_SOCKET_REGISTRATIONS = frozenset({"on", "on_event"})
_HANDLER_KEYWORDS = frozenset({"callback", "handler"})
#: Socket.IO's events that are not a client's messages: a handler named for any other event runs per message.
_CONNECTION_EVENTS = frozenset({"connect", "disconnect"})
#: python-telegram-bot's handler classes, built around the callback they run per update.
_HANDLER_CLASSES = frozenset({"CommandHandler", "MessageHandler", "CallbackQueryHandler", "InlineQueryHandler", "PrefixHandler"})


def registers_handler(analysis: "ModuleAnalysis", function: cst.FunctionDef) -> bool:
    """``function`` is decorated as a bot's per-message handler (see the module's docstring)."""
    if not function.decorators or not analysis.imports_any(fw.BOT_FRAMEWORKS):
        return False
    for decorator in function.decorators:
        expression = decorator.decorator
        target = expression.func if isinstance(expression, cst.Call) else expression
        if not isinstance(target, cst.Attribute) or _of_a_command_line_framework(analysis, target.value):
            continue
        name = target.attr.value
        if name in fw.BOT_HANDLER_DECORATORS:
            return True
        if name in _EVENT_DECORATORS:
            named = function.name.value
            if isinstance(expression, cst.Call) and expression.args and isinstance(expression.args[0].value, cst.SimpleString):
                named = expression.args[0].value.evaluated_value or ""  # `@app.event("app_mention")`
            if isinstance(named, str) and named.startswith(_PER_MESSAGE_EVENTS):
                return True
            if name == "event" and named not in _CONNECTION_EVENTS and analysis.imports_any(fw.SOCKET_FRAMEWORKS):
                return True
    return False


def _of_a_command_line_framework(analysis: "ModuleAnalysis", receiver: cst.BaseExpression) -> bool:
    """The decorator's receiver is a command-line framework (``click``) or an object one builds (``app`` bound to
    ``typer.Typer()``): ``@click.command()`` makes a program's entry point, run once per invocation."""

    def names_one(node: cst.BaseExpression) -> bool:
        return any(name.partition(".")[0] in fw.CLI_FRAMEWORKS for name in analysis.library_names(node, fw.CLI_FRAMEWORKS))

    if names_one(receiver):
        return True
    values = analysis.assigned_values(receiver) if isinstance(receiver, cst.Name) else []
    return any(isinstance(value, cst.Call) and names_one(value.func) for value in values)


def handed_to_bots(analysis: "ModuleAnalysis") -> frozenset[str]:
    """The names of the functions this module hands to a handler class or registration of a bot framework
    (``CommandHandler("draw", draw)``, ``bot.register_message_handler(reply)``)."""
    if not analysis.imports_any(fw.BOT_FRAMEWORKS):
        return frozenset()
    found = set()
    sockets = analysis.imports_any(fw.SOCKET_FRAMEWORKS)
    for call in analysis.nodes_of(cst.Call):
        name = terminal_name(call.func) or ""
        if name in _HANDLER_CLASSES or (name.startswith("register_") and name.endswith("_handler")) or (sockets and name in _SOCKET_REGISTRATIONS):
            found.update(arg.value.value for arg in call.args if isinstance(arg.value, cst.Name) and (arg.keyword is None or arg.keyword.value in _HANDLER_KEYWORDS))
    return frozenset(found)


def handler_kind(analysis: "ModuleAnalysis") -> str:
    """What a message handler of this module is called in a finding: a Socket.IO server's or a chat bot's."""
    chat_bots = fw.BOT_FRAMEWORKS - fw.SOCKET_FRAMEWORKS
    return "a Socket.IO event handler" if analysis.imports_any(fw.SOCKET_FRAMEWORKS) and not analysis.imports_any(chat_bots) else "a chat bot handler"
