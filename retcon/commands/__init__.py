"""The command lines of ``retcon``, one module per package they drive (the top layer).

``retcon.cli`` registers them; each module's ``register(subparsers)`` adds its subcommands and
imports the package it drives only inside the command's ``run``, so ``retcon --help`` loads none
of them. ``sim_worker`` is the entry point of one process of ``retcon simulate --processes N``.
"""
