using System;
using System.Globalization;

namespace Falconet.Benchmarks;

/// <summary>
/// The 8-header cycle against the Dictionary, measured so that a busy machine cannot skew the ratio: the contenders run
/// in alternating short rounds in one process (<see cref="AlternatingRounds"/>), so load from other processes lands on all
/// alike. Prints the fastest and the median round of each, their ratios to the Dictionary, and the bytes each generated
/// cycle allocated over all its rounds.
/// </summary>
public static class InterleavedCycleComparison
{
    /// <summary>Runs the comparison and prints one line per figure.</summary>
    public static void Run(int rounds = 200, int cyclesPerRound = 20_000)
    {
        var benchmarks = new RequestHeadersCycleBenchmarks();
        (string Name, Func<int> Operation)[] contenders =
        [
            ("Dictionary<string, StringValues>", benchmarks.Dictionary),
            ("generated RequestHeaders", benchmarks.Generated),
            ("generated, parser's path", benchmarks.GeneratedParserPath),
            ("app's HeaderSet, parser's path", benchmarks.AppSetParserPath),
        ];

        // A longer warm-up than the default, so every contender runs optimized (tiered) code before the first measured round.
        AlternatingRounds.Result[] results = AlternatingRounds.Run(contenders, rounds, cyclesPerRound, out long checksum, warmUpOperations: 200_000);

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"8-header cycle, {rounds} alternating rounds of {cyclesPerRound:N0} cycles (checksum {checksum})"));
        AlternatingRounds.Result baseline = results[0];
        foreach (AlternatingRounds.Result result in results)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{result.Name,-34} fastest {result.Fastest,6:F1} ns, median {result.Median,6:F1} ns, {result.AllocatedBytes} bytes allocated in all rounds, speed-up {baseline.Fastest / result.Fastest:F2}x fastest / {baseline.Median / result.Median:F2}x median"));
        }
    }
}
