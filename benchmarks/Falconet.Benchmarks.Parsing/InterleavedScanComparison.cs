using System;
using System.Globalization;

namespace Falconet.Benchmarks.Parsing;

/// <summary>
/// Checks that survive a busy machine (see <see cref="AlternatingRounds"/>): the scanner decision (intrinsics against
/// SearchValues), and whole requests through Falconet's parser against Kestrel's.
/// </summary>
public static class InterleavedScanComparison
{
    /// <summary>Prints the fastest round of each scanner for each header block, then the parser comparison.</summary>
    public static void Run(int rounds = 150, int operationsPerRound = 20_000)
    {
        var scans = new ScanBenchmarks();
        foreach (string block in new[] { "api", "browser" })
        {
            scans.Block = block;
            scans.Setup();
            AlternatingRounds.Result[] r = AlternatingRounds.Run(
                [("intrinsics", () => scans.Intrinsics()), ("searchvalues", () => scans.SearchValues())],
                rounds, operationsPerRound, out long checksum);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"scan {block}: intrinsics {r[0].Fastest:F1} ns, searchvalues {r[1].Fastest:F1} ns, ratio {r[0].Fastest / r[1].Fastest:F2} (checksum {checksum})"));
        }

        var parsers = new KestrelParserComparison();
        foreach (string request in new[] { "TechEmpower", "Browser", "Cookie4KiB" })
        {
            foreach (int segments in new[] { 1, 2 })
            {
                parsers.Request = request;
                parsers.Segments = segments;
                parsers.Setup();
                AlternatingRounds.Result[] r = AlternatingRounds.Run(
                    [("kestrel", () => parsers.Kestrel()), ("falconet", () => parsers.Falconet()),
                     ("kestrel-alone", () => parsers.KestrelParserAlone()), ("falconet-alone", () => parsers.FalconetParserAlone())],
                    rounds, operationsPerRound / 4, out long checksum);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"parse {request}, {segments} segment(s): Kestrel {r[0].Fastest:F1} ns (median {r[0].Median:F1}), Falconet {r[1].Fastest:F1} ns (median {r[1].Median:F1}, {r[1].AllocatedBytes} B in all rounds), Kestrel/Falconet {r[0].Fastest / r[1].Fastest:F2} (checksum {checksum})"));
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  parser alone: Kestrel {r[2].Fastest:F1} ns, Falconet {r[3].Fastest:F1} ns, Kestrel/Falconet {r[2].Fastest / r[3].Fastest:F2}"));
            }
        }
    }
}
