using System;
using System.Globalization;

namespace Falconet.Benchmarks.Parsing;

/// <summary>
/// Checks that survive a busy machine (see <see cref="AlternatingRounds"/>): the scanner decision (intrinsics against
/// SearchValues), and whole requests through Falconet's parser against Kestrel's.
/// </summary>
public static class InterleavedScanComparison
{
    /// <summary>
    /// What a whole parse is made of, per request in one segment: Falconet's request line alone, its header section alone
    /// (the line-event walk, and the line-by-line parse it replaced), the whole parse, Kestrel's whole parse, and the
    /// storing into the header collection that both add.
    /// </summary>
    public static void Decompose(int rounds = 150, int operationsPerRound = 20_000)
    {
        var parsers = new KestrelParserComparison();
        foreach (string request in new[] { "TechEmpower", "Browser", "Cookie4KiB" })
        {
            parsers.Request = request;
            parsers.Segments = 1;
            parsers.Setup();
            AlternatingRounds.Result[] r = AlternatingRounds.Run(
                [("line", () => parsers.FalconetRequestLineAlone()), ("walk", () => parsers.FalconetHeadersWalk()),
                 ("line-by-line", () => parsers.FalconetHeadersLineByLine()), ("falconet", () => parsers.FalconetParserAlone()),
                 ("kestrel", () => parsers.KestrelParserAlone()), ("storing", () => parsers.StoringAlone())],
                rounds, operationsPerRound / 4, out long checksum);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"decompose {request}: request line {r[0].Fastest:F1} ns, header section {r[1].Fastest:F1} ns (line by line {r[2].Fastest:F1} ns), whole parse {r[3].Fastest:F1} ns; Kestrel's whole parse {r[4].Fastest:F1} ns; storing alone {r[5].Fastest:F1} ns (checksum {checksum})"));
        }
    }

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

        Decompose(rounds, operationsPerRound);
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
                     ("kestrel-alone", () => parsers.KestrelParserAlone()), ("falconet-alone", () => parsers.FalconetParserAlone()),
                     ("storing", () => parsers.StoringAlone())],
                    rounds, operationsPerRound / 4, out long checksum);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"parse {request}, {segments} segment(s): Kestrel {r[0].Fastest:F1} ns (median {r[0].Median:F1}), Falconet {r[1].Fastest:F1} ns (median {r[1].Median:F1}, {r[1].AllocatedBytes} B in all rounds), Kestrel/Falconet {r[0].Fastest / r[1].Fastest:F2} (checksum {checksum})"));
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  parser alone: Kestrel {r[2].Fastest:F1} ns, Falconet {r[3].Fastest:F1} ns, Kestrel/Falconet {r[2].Fastest / r[3].Fastest:F2}; storing alone {r[4].Fastest:F1} ns"));
            }
        }
    }
}
