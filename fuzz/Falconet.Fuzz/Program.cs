using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Threading.Tasks;
using Falconet.Server;
using SharpFuzz;

namespace Falconet.Fuzz;

/// <summary>Runs a fuzz target under afl++ (no other arguments), or writes its seeds, replays inputs, or mutates on its own.</summary>
internal static class Program
{
    private const string Usage = """
        Falconet.Fuzz [TARGET]                    run under afl-fuzz (persistent mode, input on stdin; see fuzz/run-afl.sh)
        Falconet.Fuzz [TARGET] --seeds DIR        write the target's seed corpus into DIR
        Falconet.Fuzz [TARGET] --replay FILE...   run each input, print the property it breaks (exit 1 if any)
        Falconet.Fuzz [TARGET] --mutate N [SEED]  run N inputs of the seeded mutation fuzzer (exit 1 at the first broken property)
        TARGET: http (the default: parser and connection loop), tls-sslstream or tls-openssl (the TLS layer with that engine)
        """;

    private static async Task<int> Main(string[] args)
    {
        Target target = Target.Http;
        if (args.Length > 0 && !args[0].StartsWith("--", StringComparison.Ordinal))
        {
            if (!Target.TryParse(args[0], out target))
            {
                Console.Error.WriteLine(Usage);
                return 2;
            }

            args = args[1..];
        }

        if (args.Length == 0)
        {
            // Started inside the first run: the instrumented server may only run once SharpFuzz has mapped afl's coverage memory.
            IFuzzTarget? started = null;
            Fuzzer.Run(stream =>
            {
                started ??= target.StartAsync(false).GetAwaiter().GetResult();
                using var buffer = new MemoryStream();
                stream.CopyTo(buffer);
                started.Run(buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
            });
            return 0;
        }

        switch (args[0])
        {
            case "--seeds" when args.Length == 2:
                Directory.CreateDirectory(args[1]);
                foreach ((string name, byte[] bytes) in target.Seeds)
                {
                    await File.WriteAllBytesAsync(Path.Combine(args[1], name), bytes).ConfigureAwait(false);
                }

                Console.WriteLine($"{target.Seeds.Count} seeds written to {args[1]}");
                return 0;

            case "--replay" when args.Length >= 2:
                return await ReplayAsync(target, args[1..]).ConfigureAwait(false);

            case "--mutate" when args.Length is 2 or 3:
                return await MutateAsync(target, int.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture),
                    args.Length == 3 ? int.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture) : 1).ConfigureAwait(false);

            default:
                Console.Error.WriteLine(Usage);
                return 2;
        }
    }

    private static async Task<int> ReplayAsync(Target target, string[] files)
    {
        await using IFuzzTarget started = await target.StartAsync(true).ConfigureAwait(false);
        int broken = 0;
        foreach (string file in files)
        {
            try
            {
                started.Run(await File.ReadAllBytesAsync(file).ConfigureAwait(false));
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

    private static async Task<int> MutateAsync(Target target, int count, int seed)
    {
        await using IFuzzTarget started = await target.StartAsync(false).ConfigureAwait(false);
        var fuzzer = new MutationFuzzer(target.Seeds, seed);
        var clock = Stopwatch.StartNew();
        for (int i = 0; i < count; i++)
        {
            byte[] input = fuzzer.Next();
            try
            {
                started.Run(input);
            }
            catch (Exception exception)
            {
                string path = Path.GetFullPath($"mutation-{target.Name}-{seed}-{i}.bin");
                await File.WriteAllBytesAsync(path, input).ConfigureAwait(false);
                Console.WriteLine($"Input {i} broke a property (saved to {path}):\n{exception}");
                return 1;
            }
        }

        Console.WriteLine($"{target.Name}: {count} inputs, seed {seed}, {clock.Elapsed.TotalSeconds:F1} s: every property held");
        return 0;
    }

    /// <summary>A target by name: its seeds and how to start it (both touch the server's code only when called, see <see cref="Main"/>).</summary>
    private sealed record Target(string Name, Func<IReadOnlyList<(string Name, byte[] Bytes)>> GetSeeds, Func<bool, Task<IFuzzTarget>> Start)
    {
        public static Target Http { get; } = new("http", () => FuzzSeeds.All, async trackLeaks => await ConnectionFuzzTarget.StartAsync(trackLeaks).ConfigureAwait(false));

        public IReadOnlyList<(string Name, byte[] Bytes)> Seeds => GetSeeds();

        public Task<IFuzzTarget> StartAsync(bool trackLeaks) => Start(trackLeaks);

        public static bool TryParse(string name, out Target target)
        {
            target = name switch
            {
                "http" => Http,
                "tls-sslstream" => Tls(name, TlsEngine.SslStream),
                "tls-openssl" => Tls(name, TlsEngine.OpenSsl),
                _ => null!,
            };
            return target is not null;
        }

        private static Target Tls(string name, TlsEngine engine)
            => new(name, () => TlsFuzzSeeds.All, async trackLeaks => await TlsFuzzTarget.StartAsync(engine, trackLeaks).ConfigureAwait(false));
    }
}
