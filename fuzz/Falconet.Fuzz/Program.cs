using System;
using System.Diagnostics;
using System.IO;
using System.Threading.Tasks;
using SharpFuzz;

namespace Falconet.Fuzz;

/// <summary>Runs the connection fuzz target under afl++ (no arguments), or writes its seeds, replays inputs, or mutates on its own.</summary>
internal static class Program
{
    private const string Usage = """
        Falconet.Fuzz                    run under afl-fuzz (persistent mode, input on stdin; see fuzz/run-afl.sh)
        Falconet.Fuzz --seeds DIR        write the seed corpus (the request suite and pipelined batches) into DIR
        Falconet.Fuzz --replay FILE...   run each input, print the property it breaks (exit 1 if any)
        Falconet.Fuzz --mutate N [SEED]  run N inputs of the seeded mutation fuzzer (exit 1 at the first broken property)
        """;

    private static async Task<int> Main(string[] args)
    {
        if (args.Length == 0)
        {
            // Started inside the first run: the instrumented server may only run once SharpFuzz has mapped afl's coverage memory.
            ConnectionFuzzTarget? target = null;
            Fuzzer.Run(stream =>
            {
                target ??= ConnectionFuzzTarget.StartAsync().GetAwaiter().GetResult();
                using var buffer = new MemoryStream();
                stream.CopyTo(buffer);
                target.Run(buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
            });
            return 0;
        }

        switch (args[0])
        {
            case "--seeds" when args.Length == 2:
                Directory.CreateDirectory(args[1]);
                foreach ((string name, byte[] bytes) in FuzzSeeds.All)
                {
                    await File.WriteAllBytesAsync(Path.Combine(args[1], name), bytes).ConfigureAwait(false);
                }

                Console.WriteLine($"{FuzzSeeds.All.Count} seeds written to {args[1]}");
                return 0;

            case "--replay" when args.Length >= 2:
                return await ReplayAsync(args[1..]).ConfigureAwait(false);

            case "--mutate" when args.Length is 2 or 3:
                return await MutateAsync(int.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture),
                    args.Length == 3 ? int.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture) : 1).ConfigureAwait(false);

            default:
                Console.Error.WriteLine(Usage);
                return 2;
        }
    }

    private static async Task<int> ReplayAsync(string[] files)
    {
        await using ConnectionFuzzTarget target = await ConnectionFuzzTarget.StartAsync(trackLeaks: true).ConfigureAwait(false);
        int broken = 0;
        foreach (string file in files)
        {
            try
            {
                target.Run(await File.ReadAllBytesAsync(file).ConfigureAwait(false));
                Console.WriteLine($"ok      {file}");
            }
            catch (Exception exception)
            {
                broken++;
                Console.WriteLine($"BROKEN  {file}\n{exception}");
            }
        }

        return broken == 0 ? 0 : 1;
    }

    private static async Task<int> MutateAsync(int count, int seed)
    {
        await using ConnectionFuzzTarget target = await ConnectionFuzzTarget.StartAsync().ConfigureAwait(false);
        var fuzzer = new MutationFuzzer(FuzzSeeds.All, seed);
        var clock = Stopwatch.StartNew();
        for (int i = 0; i < count; i++)
        {
            byte[] input = fuzzer.Next();
            try
            {
                target.Run(input);
            }
            catch (Exception exception)
            {
                string path = Path.GetFullPath($"mutation-{seed}-{i}.bin");
                await File.WriteAllBytesAsync(path, input).ConfigureAwait(false);
                Console.WriteLine($"Input {i} broke a property (saved to {path}):\n{exception}");
                return 1;
            }
        }

        Console.WriteLine($"{count} inputs, seed {seed}, {clock.Elapsed.TotalSeconds:F1} s: every property held");
        return 0;
    }
}
