from gemlint.program import main

main()
