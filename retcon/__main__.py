from retcon.cli import main

raise SystemExit(main())
