using System;
using System.Diagnostics;
using System.Globalization;

namespace Falconet.Benchmarks;

/// <summary>
/// The 8-header cycle against the Dictionary, measured so that a busy machine cannot skew the ratio: the contenders run
/// in alternating short rounds in one process, so load from other processes lands on all alike. Prints the fastest and
/// the median round of each, their ratios to the Dictionary, and the bytes each generated cycle allocated over all its rounds.
/// </summary>
public static class InterleavedCycleComparison
{
    /// <summary>Runs the comparison and prints one line per figure.</summary>
    public static void Run(int rounds = 200, int cyclesPerRound = 20_000)
    {
        var benchmarks = new RequestHeadersCycleBenchmarks();
        (string Name, Func<int> Cycle)[] contenders =
        {
            ("Dictionary<string, StringValues>", benchmarks.Dictionary),
            ("generated RequestHeaders", benchmarks.Generated),
            ("generated, parser's path", benchmarks.GeneratedParserPath),
            ("app's HeaderSet, parser's path", benchmarks.AppSetParserPath),
        };
        var nanoseconds = new double[contenders.Length][];
        var allocated = new long[contenders.Length];
        long checksum = 0;

        // Warm-up, so every contender runs optimized (tiered) code before the first measured round.
        for (int i = 0; i < 200_000; i++)
        {
            foreach ((_, Func<int> cycle) in contenders)
            {
                checksum += cycle();
            }
        }

        for (int c = 0; c < contenders.Length; c++)
        {
            nanoseconds[c] = new double[rounds];
        }

        for (int round = 0; round < rounds; round++)
        {
            for (int c = 0; c < contenders.Length; c++)
            {
                Func<int> cycle = contenders[c].Cycle;
                long before = GC.GetAllocatedBytesForCurrentThread();
                long start = Stopwatch.GetTimestamp();
                for (int i = 0; i < cyclesPerRound; i++)
                {
                    checksum += cycle();
                }

                nanoseconds[c][round] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / cyclesPerRound;
                allocated[c] += GC.GetAllocatedBytesForCurrentThread() - before;
            }
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"8-header cycle, {rounds} alternating rounds of {cyclesPerRound:N0} cycles (checksum {checksum})"));
        Array.Sort(nanoseconds[0]);
        double baselineFastest = nanoseconds[0][0];
        double baselineMedian = nanoseconds[0][rounds / 2];
        for (int c = 0; c < contenders.Length; c++)
        {
            Array.Sort(nanoseconds[c]);
            double fastest = nanoseconds[c][0];
            double median = nanoseconds[c][rounds / 2];
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{contenders[c].Name,-34} fastest {fastest,6:F1} ns, median {median,6:F1} ns, {allocated[c]} bytes allocated in all rounds, speed-up {baselineFastest / fastest:F2}x fastest / {baselineMedian / median:F2}x median"));
        }
    }
}
