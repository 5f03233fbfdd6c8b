using BenchmarkDotNet.Running;

namespace Falconet.Benchmarks;

/// <summary>Entry point: pass BenchmarkDotNet arguments, e.g. <c>--filter '*' --job short</c>.</summary>
public static class Program
{
    /// <summary>Runs the benchmarks selected on the command line.</summary>
    public static void Main(string[] args) => BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
}
