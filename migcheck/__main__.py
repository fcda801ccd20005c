from migcheck.cli import main

main()
