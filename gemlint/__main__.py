from gemlint.cli import main

main()
