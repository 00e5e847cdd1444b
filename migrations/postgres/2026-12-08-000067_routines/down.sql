DROP TABLE routine_firings;
DROP TABLE routines;
