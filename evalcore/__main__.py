from evalcore.cli import main

main()
