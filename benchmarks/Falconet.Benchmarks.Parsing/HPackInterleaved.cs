using System;
using System.Globalization;

namespace Falconet.Benchmarks.Parsing;

/// <summary>The HPACK comparisons in alternating rounds (see <see cref="AlternatingRounds"/>), which hold their ratio on a busy machine.</summary>
public static class HPackInterleaved
{
    /// <summary>Prints the fastest and median round of Falconet's and Kestrel's decoders for each block, and their ratio.</summary>
    public static void Run(int rounds = 150, int operationsPerRound = 20_000)
    {
        foreach (string request in new[] { "First", "Repeated" })
        {
            var comparison = new HPackDecoderComparison { Request = request };
            comparison.Setup();
            AlternatingRounds.Result[] r = AlternatingRounds.Run(
                [("kestrel", comparison.Kestrel), ("falconet", comparison.Falconet)],
                rounds, operationsPerRound, out long checksum);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"hpack decode {request}: Kestrel {r[0].Fastest:F1} ns (median {r[0].Median:F1}, {(double)r[0].AllocatedBytes / (rounds * operationsPerRound):F1} B/op), Falconet {r[1].Fastest:F1} ns (median {r[1].Median:F1}, {(double)r[1].AllocatedBytes / (rounds * operationsPerRound):F1} B/op): {r[0].Fastest / r[1].Fastest:F2}x faster (checksum {checksum})"));
        }
    }

    /// <summary>
    /// Warms one variant up (50,000 operations, so the measured ones run the JIT's final code), then runs it
    /// <paramref name="operations"/> times. Under <c>valgrind --tool=callgrind</c>, the instructions of a run with N
    /// operations minus those of a run with 0, divided by N, are the variant's instructions per operation: a figure the
    /// load of a shared machine does not move.
    /// </summary>
    public static void Count(string variant, string request, int operations)
    {
        Func<int> operation = Operation(variant, request);
        long checksum = 0;
        for (int i = 0; i < 50_000; i++)
        {
            checksum += operation();
        }

        for (int i = 0; i < operations; i++)
        {
            checksum += operation();
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{variant} {request} x{operations}: checksum {checksum}"));
    }

    private static Func<int> Operation(string variant, string request)
    {
        var comparison = new HPackDecoderComparison { Request = request };
        comparison.Setup();
        return variant switch
        {
            "kestrel" => comparison.Kestrel,
            "falconet" => comparison.Falconet,
            _ => throw new ArgumentException("Unknown variant: " + variant, nameof(variant)),
        };
    }
}
