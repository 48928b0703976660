"""Reading: asv results files and their provenance records, bounded and validated, into the
typed records (:mod:`bot.results.types`) that every later stage consumes."""
