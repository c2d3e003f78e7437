"""The offline extractive reader's parts: context index, question type, spans and dates.

`bench.providers.offline_answer` puts them together; see its docstring for the algorithm.
"""
