from encbench.cli import main

raise SystemExit(main())
