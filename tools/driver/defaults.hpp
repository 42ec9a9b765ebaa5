// SPDX-License-Identifier: Apache-2.0
// The problems blockdnn-bench runs without arguments, as benchdnn batch text: the ResNet-50
// convolutions and batch normalizations (oneDNN's inputs/conv/shapes_resnet_50 and
// inputs/bnorm/shapes_resnet_50, duplicates left out) and a few RNN problems.
#pragma once

namespace bdrv {

/// Small minibatches (conv 1, bnorm 2: benchdnn's default) so that correctness against the
/// reference and timing on both ISAs take well under a minute on two cores; `full_defaults`
/// is the longer run (--full).
inline const char *quick_defaults = R"(
--conv --mb=1 --dir=FWD_B
--batch=resnet_50_conv
--bnorm --mb=2
--dir=FWD_D --flags=CH --batch=resnet_50_bnorm
--dir=FWD_I --flags=GCH --batch=resnet_50_bnorm
--dir=BWD_DW --flags=CH --batch=resnet_50_bnorm
--rnn
--alg=VANILLA_LSTM l1t50mb8sic256n"lstm"
--alg=VANILLA_GRU l1t50mb8sic256n"gru"
--alg=LBR_GRU l1t50mb8sic256n"lbr_gru"
--alg=VANILLA_RNN --activation=TANH l1t100mb1sic128n"rnn_tanh"
--alg=VANILLA_LSTM --direction=concat l2t20mb4sic128n"lstm_bidir_2layers"
)";

/// --full: benchdnn's own minibatches for ResNet-50 (conv mb 16, bnorm mb 16) and larger RNNs.
inline const char *full_defaults = R"(
--conv --mb=16 --dir=FWD_B
--batch=resnet_50_conv
--bnorm --mb=16
--dir=FWD_D --flags=CH --batch=resnet_50_bnorm
--dir=FWD_I --flags=GCH --batch=resnet_50_bnorm
--dir=BWD_DW --flags=CH --batch=resnet_50_bnorm
--rnn
--alg=VANILLA_LSTM l1t50mb64sic512n"lstm"
--alg=VANILLA_GRU l1t50mb64sic512n"gru"
--alg=LBR_GRU l1t50mb64sic512n"lbr_gru"
--alg=VANILLA_RNN --activation=TANH l1t100mb1sic128n"rnn_tanh"
--alg=VANILLA_LSTM --direction=concat l1t101mb64sic256n"GNMT:encoder_bidir_0"
)";

/// The embedded "files" the defaults include.
inline const char *resnet_50_conv = R"(
g1mb50ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3n"resnet_50:conv1"
mb50ic64ih56oc256oh56kh1ph0n"resnet_50:res2a_branch1*4"
mb50ic64ih56oc64oh56kh1ph0n"resnet_50:res2a_branch2a"
mb50ic64ih56oc64oh56kh3ph1n"resnet_50:res2a_branch2b*3"
mb50ic256ih56oc64oh56kh1ph0n"resnet_50:res2b_branch2a*2"
g1mb50ic256ih56iw56oc512oh28ow28kh1kw1sh2sw2ph0pw0n"resnet_50:res3a_branch1"
g1mb50ic256ih56iw56oc128oh28ow28kh1kw1sh2sw2ph0pw0n"resnet_50:res3a_branch2a"
mb50ic128ih28oc128oh28kh3ph1n"resnet_50:res3a_branch2b*4"
mb50ic128ih28oc512oh28kh1ph0n"resnet_50:res3a_branch2c*4"
mb50ic512ih28oc128oh28kh1ph0n"resnet_50:res3b_branch2a*3"
g1mb50ic512ih28iw28oc1024oh14ow14kh1kw1sh2sw2ph0pw0n"resnet_50:res4a_branch1"
g1mb50ic512ih28iw28oc256oh14ow14kh1kw1sh2sw2ph0pw0n"resnet_50:res4a_branch2a"
mb50ic256ih14oc256oh14kh3ph1n"resnet_50:res4a_branch2b*6"
mb50ic256ih14oc1024oh14kh1ph0n"resnet_50:res4a_branch2c*6"
mb50ic1024ih14oc256oh14kh1ph0n"resnet_50:res4b_branch2a*5"
g1mb50ic1024ih14iw14oc2048oh7ow7kh1kw1sh2sw2ph0pw0n"resnet_50:res5a_branch1"
g1mb50ic1024ih14iw14oc512oh7ow7kh1kw1sh2sw2ph0pw0n"resnet_50:res5a_branch2a"
mb50ic512ih7oc512oh7kh3ph1n"resnet_50:res5a_branch2b*3"
mb50ic512ih7oc2048oh7kh1ph0n"resnet_50:res5a_branch2c*3"
mb50ic2048ih7oc512oh7kh1ph0n"resnet_50:res5b_branch2a*2"
)";

inline const char *resnet_50_bnorm = R"(
mb50_ic64_ih112iw112_n"resnet_50:bn_conv1"
mb50_ic256_ih56iw56_n"resnet_50:bn2a_branch1*4"
mb50_ic64_ih56iw56_n"resnet_50:bn2a_branch2a*6"
mb50_ic512_ih28iw28_n"resnet_50:bn3a_branch1*5"
mb50_ic128_ih28iw28_n"resnet_50:bn3a_branch2a*8"
mb50_ic1024_ih14iw14_n"resnet_50:bn4a_branch1*7"
mb50_ic256_ih14iw14_n"resnet_50:bn4a_branch2a*12"
mb50_ic2048_ih7iw7_n"resnet_50:bn5a_branch1*4"
mb50_ic512_ih7iw7_n"resnet_50:bn5a_branch2a*6"
)";

} // namespace bdrv
