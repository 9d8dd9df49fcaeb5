from fabgen.cli import main

main()
