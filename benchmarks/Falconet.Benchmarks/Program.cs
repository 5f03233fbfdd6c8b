using BenchmarkDotNet.Running;

namespace Falconet.Benchmarks;

/// <summary>
/// Entry point: BenchmarkDotNet arguments (e.g. <c>--filter '*' --job short</c>), <c>--interleaved</c> for the
/// alternating-rounds cycle check, or <c>--tls-records</c> for the TLS record-size comparison.
/// </summary>
public static class Program
{
    /// <summary>Runs the benchmarks selected on the command line.</summary>
    public static void Main(string[] args)
    {
        if (args is ["--interleaved"])
        {
            InterleavedCycleComparison.Run();
            return;
        }

        if (args is ["--tls-records"])
        {
            TlsRecordSizeComparison.Run();
            return;
        }

        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
    }
}
