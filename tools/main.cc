// fixpoint CLI: placeholder until subcommands land.
int main() { return 0; }
