"""The hazard catalog: one module per rule, each declaring `RULE = Rule(...)`.

`ttrecord.analysis.registry` discovers every module here (see its docstring for the contract);
adding a rule is adding a module. Shared detection code lives in `ttrecord.analysis`.
"""
